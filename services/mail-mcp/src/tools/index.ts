import type { ToolDefinition } from '@mcp-fleet/kit';
import type { MailDeps } from '../deps';
import { mailCountTool } from './mail-count';
import { mailForwardTool } from './mail-forward';
import { mailGetTool } from './mail-get';
import { mailLabelApplyTool } from './mail-label-apply';
import { mailLabelCreateTool } from './mail-label-create';
import { mailLabelsTool } from './mail-labels';
import { mailMoveTool } from './mail-move';
import { mailSearchTool } from './mail-search';
import { mailSendTool } from './mail-send';

export function createTools(deps: MailDeps): ToolDefinition[] {
  return [
    mailSearchTool(deps),
    mailSendTool(deps),
    mailForwardTool(deps),
    mailGetTool(deps),
    mailCountTool(deps),
    mailLabelsTool(deps),
    mailLabelCreateTool(deps),
    mailLabelApplyTool(deps),
    mailMoveTool(deps),
  ];
}
