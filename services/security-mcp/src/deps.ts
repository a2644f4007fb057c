import type { OutboundPolicy } from '@mcp-fleet/outbound';
import type { Config } from './config';

/** What the tools share: configuration, decoded keys and the outbound policy (ssl_check). */
export interface SecurityDeps {
  config: Config;
  policy: OutboundPolicy;
  /** JWT_SECRET as bytes; undefined when not configured. */
  jwtKey?: Uint8Array;
  /** ENCRYPTION_KEY decoded; undefined when not configured. */
  encryptionKey?: Buffer;
}
