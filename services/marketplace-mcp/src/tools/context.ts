import type { SkillCatalog } from '../catalog';
import type { SubRegistry } from '../registry';

/** What the tools need: the catalog, the sub-registry and the base URL downloads are served at. */
export interface ToolDeps {
  catalog: SkillCatalog;
  registry: SubRegistry;
  baseUrl: string;
}
