/**
 * The Skills extension on the gateway's MCP endpoint: its methods (skills/list, skills/get,
 * resources/directory/read) are in the method table of both eras (methods.ts); resources/read of a
 * skill file goes through readResource; resources/list shows each skill's SKILL.md (below).
 */
import type { Principal } from '../auth/auth';
import type { GatewayContext } from '../core/context';
import { skillsOf } from '../core/skills';

/**
 * resources/list with the skills: the listed resources less any in a service's skill namespace
 * (skill://<service-id>/... is the skills' alone), then each visible skill's SKILL.md.
 */
export async function withSkillResources(
  ctx: GatewayContext,
  listed: { resources: Record<string, unknown>[] },
  principal: Principal | undefined,
): Promise<{ resources: Record<string, unknown>[] }> {
  const skills = skillsOf(ctx);
  const others = listed.resources.filter((r) => typeof r.uri !== 'string' || !skills.reserves(r.uri));
  return { resources: [...others, ...(await skills.skillMdResources(principal))] };
}
