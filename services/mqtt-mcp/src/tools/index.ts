import type { ToolDefinition } from '@mcp-fleet/kit';
import type { Config } from '../config';
import type { MqttHub } from '../hub';
import { getMqttStatusTool } from './get-mqtt-status';
import { listMessagesTool } from './list-messages';
import { publishMessageTool } from './publish-message';
import { subscribeTopicTool, unsubscribeTopicTool } from './subscribe-topic';

export interface ToolDeps {
  hub: MqttHub;
  config: Config;
}

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [publishMessageTool(deps), subscribeTopicTool(deps), unsubscribeTopicTool(deps), getMqttStatusTool(deps), listMessagesTool(deps)];
}
