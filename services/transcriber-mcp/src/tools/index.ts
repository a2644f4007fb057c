import type { ToolDefinition } from '@mcp-fleet/kit';
import type { TranscriberDeps } from '../deps';
import { transcribeAudioTool } from './transcribe-audio';
import { transcribeUrlTool } from './transcribe-url';

export function createTools(deps: TranscriberDeps): ToolDefinition[] {
  return [transcribeAudioTool(deps), transcribeUrlTool(deps)];
}
