/**
 * Ownership: what a caller creates through the gateway belongs to the principal that created it
 * (Principal.owner: an API key's name, or a token's issuer and subject). Another principal naming it
 * is answered exactly as for an id that does not exist (same status, same body): no oracle. This is
 * the one place that says whose a thing is; what uses it:
 *
 *   MCP sessions (Mcp-Session-Id, 2025 era)   McpSessionTransport: POST, GET (SSE) and DELETE
 *   2026-07-28 tasks, their listen notices    TaskManager (the `owner` column), tasks.visible
 *   input_required exchanges (requestState)   InputExchanges (the owner is signed into the state)
 *   recorded call history (session_id)        CallHistory (historyKey), GET /debug/contexts/{id}
 *
 * Without authorization there is no principal: the owner is null and everything is everyone's, so
 * ids handed out must be unguessable instead (MCP session ids are random UUIDs, 122 random bits).
 */
import { principalOf, type Principal } from './auth';
import type { HttpResponse } from '@mcp-fleet/kit';

/** A principal's owner key; null without authorization. */
export type Owner = string | null;

export const ownerOf = (principal: Principal | undefined): Owner => (principal ? principal.owner : null);

/** The owner of the request this response answers (its principal, set by the auth middleware). */
export const callerOwner = (res: Pick<HttpResponse, 'locals'> | undefined): Owner => ownerOf(principalOf(res));

/** What a recorded session id can be: a native or `_meta` session_id, or an MCP session's UUID. */
export const SESSION_ID = /^[\w.:-]{1,128}$/;

/**
 * The key a session's call history is stored under: the session id alone without authorization,
 * else the id and its owner, so that principals naming the same session_id (a native label anyone
 * may choose) each have their own history, and no principal reads or writes another's. Session ids
 * hold no space (1-128 of [A-Za-z0-9_.:-], or an MCP session's UUID), so no id spells another's key.
 */
export const historyKey = (sessionId: string, owner: Owner): string => (owner === null ? sessionId : `${sessionId} ${owner}`);
