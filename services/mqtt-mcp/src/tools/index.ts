import type { ToolDefinition } from '@mcp-fleet/kit';
import type { ToolDeps } from './context';
import { getMqttStatusTool } from './get-mqtt-status';
import { listMessagesTool } from './list-messages';
import { publishMessageTool } from './publish-message';
import { subscribeTopicTool, unsubscribeTopicTool } from './subscribe-topic';

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [publishMessageTool(deps), subscribeTopicTool(deps), unsubscribeTopicTool(deps), getMqttStatusTool(deps), listMessagesTool(deps)];
}
