import { SERVICES, type ServiceEntry } from '@mcp-fleet/inventory';

/** Services built in this repository that compose runs as containers (and Kubernetes as Deployments): generate.ts and kubernetes.ts both start here. */
export function composedServices(): ServiceEntry[] {
  return SERVICES.filter((s) => s.status === 'available' && s.http);
}
