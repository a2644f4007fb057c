import type { ToolDefinition } from '@mcp-fleet/kit';
import type { SecurityDeps } from '../deps';
import { decryptTool } from './decrypt';
import { encryptTool } from './encrypt';
import { jwtTokenTool } from './jwt-token';
import { jwtVerifyTool } from './jwt-verify';
import { passwordHashTool } from './password-hash';
import { passwordVerifyTool } from './password-verify';
import { sslCheckTool } from './ssl-check';

export function createTools(deps: SecurityDeps): ToolDefinition[] {
  return [
    jwtTokenTool(deps),
    jwtVerifyTool(deps),
    passwordHashTool(deps),
    passwordVerifyTool(deps),
    encryptTool(deps),
    decryptTool(deps),
    sslCheckTool(deps),
  ];
}
