/** The Kubernetes manifests (deploy/kubernetes, scripts/gen/kubernetes.ts): valid objects, the security shape issue 32 asks for, no drift. */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import YAML from 'yaml';
import { GATEWAY_ID, SERVICES, envPrefix } from '@mcp-fleet/inventory';
import { composedServices } from '../../scripts/gen/generate';
import {
  FOOTPRINT_RESULTS,
  GATEWAY_REQUIRED_SECRETS,
  idleRssMib,
  KUBERNETES_DIR,
  memoryRequestMib,
  NAMESPACE,
  NODE_UID,
  PERSISTENT_DATA,
  renderKubernetes,
  sandboxed,
  selectorLabels,
} from '../../scripts/gen/kubernetes';
import { secretVariables } from '../../scripts/gen/secret-variables';
import { configSource } from '../../scripts/build/stamp';
import { isSecretName } from '../../packages/kit/src/logger';
import { hostOriginRule } from '@mcp-fleet/kit';

const ROOT = path.resolve(__dirname, '../..');

type Obj = any;

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** The committed manifests, read as kubectl would (YAML 1.1), kustomization files apart. */
function committedObjects(): { file: string; obj: Obj }[] {
  return filesUnder(KUBERNETES_DIR)
    .filter((f) => !f.endsWith('kustomization.yaml'))
    .flatMap((file) => YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), { version: '1.1' }).map((d) => ({ file, obj: d.toJS() })));
}

const objects = committedObjects().map((o) => o.obj);
const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
const named = (kind: string, name: string) => ofKind(kind).find((o) => o.metadata.name === name);
const fleetDeployments = () => ofKind('Deployment');
const containerOf = (id: string) => named('Deployment', id).spec.template.spec.containers[0];
const envOf = (id: string): Record<string, Obj> => Object.fromEntries(containerOf(id).env.map((e: Obj) => [e.name, e]));

/** Validates objects against the Kubernetes OpenAPI schemas of kubernetes-models (ESM only, so in a child node). */
function schemaErrors(docs: Obj[]): string[] {
  const script = `
    const docs = JSON.parse(await new Promise((r) => { let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => r(s)); }));
    const errors = [];
    for (const doc of docs) {
      const where = doc.kind + ' ' + (doc.metadata && doc.metadata.name);
      let Model;
      try { Model = (await import('kubernetes-models/' + doc.apiVersion + '/' + doc.kind))[doc.kind]; }
      catch (e) { errors.push(where + ': no schema for ' + doc.apiVersion + ' ' + doc.kind); continue; }
      try { new Model(doc).validate(); } catch (e) { errors.push(where + ': ' + e.message); }
    }
    process.stdout.write(JSON.stringify(errors));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    input: JSON.stringify(docs),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`schema validation did not run: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** Whether a NetworkPolicy peer's podSelector (same namespace) selects a pod with these labels. */
function selects(selector: Obj, podLabels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (podLabels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in podLabels;
    if (e.operator === 'In' && !(has && e.values.includes(podLabels[e.key]))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(podLabels[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/**
 * Which of the namespace's pods (by their labels) may open a connection to `dst` on `port`: the union
 * of the ingress rules of every policy selecting dst (none selecting it: all may; a peer without
 * podSelector, or a rule without from: all may).
 */
function admittedSources(
  policies: Obj[],
  pods: Record<string, string>[],
  dst: Record<string, string>,
  port: number,
): Record<string, string>[] | 'any' {
  const applying = policies.filter((p) => selects(p.spec.podSelector, dst) && (p.spec.policyTypes ?? ['Ingress']).includes('Ingress'));
  if (!applying.length) return 'any';
  const admitted = new Set<Record<string, string>>();
  for (const rule of applying.flatMap((p) => p.spec.ingress ?? [])) {
    if (rule.ports && !rule.ports.some((p: Obj) => p.port === port)) continue;
    if (!rule.from) return 'any';
    for (const peer of rule.from) {
      if (!peer.podSelector || peer.namespaceSelector || peer.ipBlock) return 'any';
      for (const pod of pods) if (selects(peer.podSelector, pod)) admitted.add(pod);
    }
  }
  return [...admitted];
}

/** A fleet service's address (the gateway's downstream URLs): no credential in it, whatever its variable is called. */
const serviceAddress = /^http:\/\/[a-z0-9-]+:\d+$/;
/** Env entries that carry a secret's value in the manifest itself instead of naming a Secret (the kit's rule for secret names). */
function literalSecrets(container: Obj, secretNames: Set<string>): string[] {
  return (container.env ?? [])
    .filter(
      (e: Obj) => (secretNames.has(e.name) || isSecretName(e.name)) && !e.valueFrom?.secretKeyRef && !serviceAddress.test(e.value ?? ''),
    )
    .map((e: Obj) => e.name);
}

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('are exactly what `pnpm gen` writes from the inventory, with no stray file', () => {
    const rendered = renderKubernetes();
    for (const [file, text] of Object.entries(rendered)) expect([file, fs.readFileSync(file, 'utf8')]).toEqual([file, text]);
    expect(filesUnder(KUBERNETES_DIR).sort()).toEqual(Object.keys(rendered).sort());
  });

  it('list every manifest file in the kustomization of its directory, and the quickstart adds the engines to the base', () => {
    for (const dir of ['base', 'engines']) {
      const k = YAML.parse(fs.readFileSync(path.join(KUBERNETES_DIR, dir, 'kustomization.yaml'), 'utf8'));
      expect(k.kind).toBe('Kustomization');
      const present = filesUnder(path.join(KUBERNETES_DIR, dir))
        .map((f) => path.relative(path.join(KUBERNETES_DIR, dir), f))
        .filter((f) => f !== 'kustomization.yaml')
        .sort();
      expect([...k.resources].sort()).toEqual(present);
    }
    expect(YAML.parse(fs.readFileSync(path.join(KUBERNETES_DIR, 'quickstart/kustomization.yaml'), 'utf8')).resources).toEqual([
      '../base',
      '../engines',
    ]);
  });

  it('validate against the Kubernetes object schemas (kubernetes-models), which do reject a wrong object', () => {
    expect(objects.length).toBeGreaterThan(composedServices().length * 3);
    expect(schemaErrors(objects)).toEqual([]);
    // the validator is not a rubber stamp: a port spelt as a word and an unknown seccomp type fail
    const broken = structuredClone(named('Deployment', 'filesystem-mcp'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'seven thousand';
    broken.spec.template.spec.containers[0].securityContext.seccompProfile.type = 'Lenient';
    const errors = schemaErrors([
      broken,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x' }, spec: { ports: [{ name: 'http' }] } },
    ]);
    expect(errors.join('\n')).toMatch(/containerPort must be integer/);
    expect(errors.join('\n')).toMatch(/seccompProfile\/type must be equal to one of the allowed values/);
    expect(errors.join('\n')).toMatch(/Service x: .*must have required property port/);
  });

  it('give every available HTTP service a Deployment and a Service on its documented port in one namespace; the stdio one runs inside the gateway', () => {
    for (const s of composedServices()) {
      const dep = named('Deployment', s.id);
      const svc = named('Service', s.id);
      expect([s.id, dep !== undefined, svc !== undefined]).toEqual([s.id, true, true]);
      expect(dep.metadata.namespace).toBe(NAMESPACE);
      expect(svc.spec.ports).toEqual([{ name: 'http', port: s.port, targetPort: 'http', protocol: 'TCP' }]);
      expect(svc.spec.selector).toEqual(selectorLabels(s.id));
      expect(dep.spec.selector.matchLabels).toEqual(selectorLabels(s.id));
      expect(dep.spec.template.metadata.labels).toMatchObject(selectorLabels(s.id));
      const c = containerOf(s.id);
      expect(c.ports[0]).toEqual({ name: 'http', containerPort: s.port, protocol: 'TCP' });
      expect(envOf(s.id).PORT.value).toBe(String(s.port));
      expect(envOf(s.id).HOST.value).toBe('0.0.0.0');
      expect(fs.existsSync(path.join(ROOT, 'services', s.id, 'src/server.ts'))).toBe(true);
    }
    expect(
      fleetDeployments()
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(
      composedServices()
        .map((s) => s.id)
        .sort(),
    );
    for (const s of SERVICES.filter((x) => x.status === 'available' && !x.http)) {
      expect([s.id, s.pattern]).toEqual([s.id, 'stdio']);
      expect(envOf(GATEWAY_ID).STDIO_SERVERS).toBeUndefined(); // left at its default: true
    }
    for (const o of objects.filter((x) => x.kind !== 'Namespace'))
      expect([o.kind, o.metadata.name, o.metadata.namespace]).toEqual([o.kind, o.metadata.name, NAMESPACE]);
  });

  it('probe /health for startup, readiness and liveness, with a loopback Host the Host rule answers', () => {
    for (const s of composedServices()) {
      const c = containerOf(s.id);
      for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
        expect([s.id, kind, c[kind].httpGet.path, c[kind].httpGet.port]).toEqual([s.id, kind, '/health', 'http']);
        expect(c[kind].httpGet.httpHeaders).toEqual([{ name: 'Host', value: 'localhost' }]);
      }
      expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(60);
    }
  });

  it('run every container as uid 1000, non-root, read-only root, no escalation, no capabilities; seccomp RuntimeDefault except the four sandboxed services', () => {
    const sandboxedIds = composedServices()
      .filter((s) => sandboxed(s.id))
      .map((s) => s.id)
      .sort();
    // the gateway too: it starts its stdio MCP servers inside bubblewrap (stdio-sandbox.ts)
    expect(sandboxedIds).toEqual(['git-mcp', 'media-mcp', 'mega-orchestrator', 'terminal-mcp', 'transcriber-mcp']);
    for (const kind of ['Deployment', 'StatefulSet'])
      for (const w of ofKind(kind)) {
        const pod = w.spec.template.spec;
        expect([w.metadata.name, pod.securityContext.runAsNonRoot, pod.enableServiceLinks, pod.automountServiceAccountToken]).toEqual([
          w.metadata.name,
          true,
          false,
          false,
        ]);
        for (const c of pod.containers) {
          const sc = c.securityContext;
          expect([c.name, sc.runAsNonRoot, sc.readOnlyRootFilesystem, sc.allowPrivilegeEscalation, sc.capabilities]).toEqual([
            c.name,
            true,
            true,
            false,
            { drop: ['ALL'] },
          ]);
          expect(sc.privileged).toBeUndefined();
          expect(sc.capabilities.add).toBeUndefined();
          const tmp = c.volumeMounts.find((m: Obj) => m.mountPath === '/tmp');
          expect([c.name, pod.volumes.find((v: Obj) => v.name === tmp?.name)?.emptyDir !== undefined]).toEqual([c.name, true]);
          if (kind === 'StatefulSet') continue;
          expect([c.name, sc.runAsUser, pod.securityContext.runAsUser, pod.securityContext.fsGroup]).toEqual([
            c.name,
            NODE_UID,
            NODE_UID,
            NODE_UID,
          ]);
          if (sandboxedIds.includes(c.name)) {
            // bubblewrap's namespaces and its fresh /proc, inside a pod user namespace
            expect([
              c.name,
              sc.seccompProfile,
              pod.securityContext.seccompProfile,
              sc.appArmorProfile,
              sc.procMount,
              pod.hostUsers,
            ]).toEqual([c.name, { type: 'Unconfined' }, { type: 'RuntimeDefault' }, { type: 'Unconfined' }, 'Unmasked', false]);
          } else {
            expect([c.name, sc.seccompProfile, pod.securityContext.seccompProfile, sc.procMount, pod.hostUsers]).toEqual([
              c.name,
              { type: 'RuntimeDefault' },
              { type: 'RuntimeDefault' },
              undefined,
              undefined,
            ]);
          }
        }
      }
  });

  it('give DATA_DIR a volume: a claim where users keep records (one pod, Recreate), else an emptyDir; the workspace claim where WORKSPACE_ROOTS is read', () => {
    for (const s of composedServices()) {
      const dep = named('Deployment', s.id);
      const pod = dep.spec.template.spec;
      const c = containerOf(s.id);
      expect(envOf(s.id).DATA_DIR.value).toBe('/data');
      const data = pod.volumes.find((v: Obj) => v.name === c.volumeMounts.find((m: Obj) => m.mountPath === '/data').name);
      if (PERSISTENT_DATA[s.id]) {
        expect(data.persistentVolumeClaim.claimName).toBe(`${s.id}-data`);
        expect(named('PersistentVolumeClaim', `${s.id}-data`).spec.resources.requests.storage).toBe(PERSISTENT_DATA[s.id]);
        expect([s.id, dep.spec.strategy?.type, dep.spec.replicas]).toEqual([s.id, 'Recreate', 1]);
      } else expect([s.id, data.emptyDir !== undefined]).toEqual([s.id, true]);
      const ws = c.volumeMounts.find((m: Obj) => m.mountPath === '/workspace');
      expect([s.id, ws !== undefined]).toEqual([s.id, envOf(s.id).WORKSPACE_ROOTS?.value === '/workspace']);
      if (ws && s.pattern !== 'gateway')
        expect(pod.volumes.find((v: Obj) => v.name === ws.name).persistentVolumeClaim.claimName).toBe('workspace');
    }
    // the gateway's replicas spread over nodes: its stdio servers get an empty scratch workspace, not the shared claim
    const gw = named('Deployment', GATEWAY_ID).spec.template.spec;
    expect(gw.volumes.find((v: Obj) => v.name === 'workspace').emptyDir).toBeDefined();
    expect(named('PersistentVolumeClaim', 'workspace')).toBeDefined();
  });

  it('set requests and limits on every container, requests within limits', () => {
    const mib = (q: string) => (q.endsWith('Gi') ? parseFloat(q) * 1024 : parseFloat(q));
    const cores = (q: string) => (q.endsWith('m') ? parseFloat(q) / 1000 : parseFloat(q));
    for (const w of [...ofKind('Deployment'), ...ofKind('StatefulSet')])
      for (const c of w.spec.template.spec.containers) {
        const { requests, limits } = c.resources;
        expect(mib(requests.memory)).toBeLessThanOrEqual(mib(limits.memory));
        expect(cores(requests.cpu)).toBeLessThanOrEqual(cores(limits.cpu));
        expect(mib(requests.memory)).toBeGreaterThan(0);
      }
  });

  it("request each container's measured idle RSS (the built fleet's, from the footprint bench) plus a quarter", () => {
    const mib = (q: string) => (q.endsWith('Gi') ? parseFloat(q) * 1024 : parseFloat(q));
    const rss = idleRssMib();
    // the built fleet's figures, not the tsx era's (those were 94-308 MiB): every service measured
    const { result } = JSON.parse(fs.readFileSync(FOOTPRINT_RESULTS, 'utf8'));
    const built = result.results.find((r: { mode: string }) => r.mode === 'built');
    expect(Object.keys(rss).sort()).toEqual(Object.keys(built.idleRssKiB).sort());
    for (const d of ofKind('Deployment')) {
      const id = d.metadata.name;
      expect(rss[id]).toBeGreaterThan(0);
      const request = mib(d.spec.template.spec.containers[0].resources.requests.memory);
      expect(request).toBe(memoryRequestMib(id, rss));
      expect(request).toBeGreaterThanOrEqual(rss[id] * 1.25);
      expect(request).toBeLessThan(rss[id] * 1.25 + 16);
    }
    // a service the bench has not measured yet gets the fixed allowance, not nothing
    expect(memoryRequestMib('a-new-service', {})).toBe(160);
  });

  it('scale the stateless gateway on CPU, with its history, contexts, rate limits and signing key shared through PostgreSQL, Redis and a Secret', () => {
    const hpa = named('HorizontalPodAutoscaler', GATEWAY_ID);
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: GATEWAY_ID });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(containerOf(GATEWAY_ID).resources.requests.cpu).toBeDefined(); // utilisation is measured against it
    expect(named('Deployment', GATEWAY_ID).spec.replicas).toBeUndefined(); // the HPA's to set
    expect(named('PodDisruptionBudget', GATEWAY_ID).spec.minAvailable).toBe(1);
    // API keys come from an optional Secret, mounted read-only
    const gw = named('Deployment', GATEWAY_ID).spec.template.spec;
    expect(gw.volumes.find((v: Obj) => v.name === 'api-keys').secret).toMatchObject({
      secretName: `${GATEWAY_ID}-api-keys`,
      optional: true,
    });
    expect(containerOf(GATEWAY_ID).volumeMounts.find((m: Obj) => m.name === 'api-keys')).toEqual({
      name: 'api-keys',
      mountPath: '/etc/mcp-fleet/api-keys',
      readOnly: true,
    });
    const env = envOf(GATEWAY_ID);
    for (const name of GATEWAY_REQUIRED_SECRETS)
      expect(env[name].valueFrom.secretKeyRef).toEqual({ name: `${GATEWAY_ID}-secrets`, key: name }); // required: not optional
    expect(env.SESSION_DB).toBeUndefined();
    expect(env.MCP_INSTANCE_URL.value).toBe('http://$(POD_IP):7000/mcp');
    expect(env.POD_IP.valueFrom.fieldRef.fieldPath).toBe('status.podIP');
    for (const d of composedServices().filter((x) => x.id !== GATEWAY_ID && x.pattern !== 'coordinator'))
      expect(env[`${envPrefix(d.id)}_URL`].value).toBe(`http://${d.id}:${d.port}`);
    expect(envOf('coordinator')[`${envPrefix(GATEWAY_ID)}_URL`].value).toBe(`http://${GATEWAY_ID}:7000`);
  });

  it('expand only variables defined earlier in the same container (kubelet leaves the others as literal text)', () => {
    for (const d of fleetDeployments()) {
      const seen = new Set<string>();
      for (const e of containerOf(d.metadata.name).env) {
        for (const m of String(e.value ?? '').matchAll(/\$\(([A-Z0-9_]+)\)/g))
          expect([e.name, m[1], seen.has(m[1])]).toEqual([e.name, m[1], true]);
        seen.add(e.name);
      }
    }
  });

  it('set ALLOWED_HOSTS to the names each service is called by: a tool service the name in the gateway URL, the gateway its Service, pod and public names', () => {
    const gatewayEnv = envOf(GATEWAY_ID);
    for (const s of composedServices()) {
      const allowed = envOf(s.id).ALLOWED_HOSTS.value.split(',');
      if (s.pattern === 'gateway' || s.pattern === 'coordinator') {
        expect(allowed).toEqual(expect.arrayContaining([s.id, `${s.id}.$(POD_NAMESPACE).svc.cluster.local`, '$(PUBLIC_HOSTS)']));
        expect(envOf(s.id).PUBLIC_HOSTS.valueFrom.configMapKeyRef).toEqual({ name: 'mcp-fleet', key: `${s.id}.public-hosts` });
        expect(named('ConfigMap', 'mcp-fleet').data[`${s.id}.public-hosts`]).toBe('');
      } else {
        expect([s.id, allowed]).toEqual([s.id, [new URL(gatewayEnv[`${envPrefix(s.id)}_URL`].value).hostname]]);
      }
      expect(allowed).not.toContain('*');
    }
    expect(envOf(GATEWAY_ID).ALLOWED_HOSTS.value.split(',')).toContain('$(POD_IP)'); // MCP_INSTANCE_URL's host, for the other instances
  });

  it("parse as each service's configuration, and its Host rule answers the probe and the names it is called by, refusing the kubelet's default Host and other names", () => {
    const sample: Record<string, string> = {
      POD_IP: '10.1.2.3',
      POD_NAMESPACE: NAMESPACE,
      PUBLIC_HOSTS: 'mcp.example.com',
      SESSION_DATABASE_URL: 'postgres://fleet:pw@postgres:5432/fleet',
      REDIS_URL: 'redis://redis:6379',
      MCP_STATE_SECRET: 'x'.repeat(40),
    };
    const gatewayUrls = envOf(GATEWAY_ID);
    for (const s of composedServices()) {
      // the environment the kubelet gives the container: values expanded, required references filled, optional Secrets absent
      const env: Record<string, string> = {};
      for (const e of containerOf(s.id).env) {
        if (e.value !== undefined) env[e.name] = e.value.replace(/\$\(([A-Z0-9_]+)\)/g, (_: string, v: string) => env[v]);
        else if (!e.valueFrom.secretKeyRef?.optional) env[e.name] = sample[e.name];
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { readConfig } = require(configSource(s.id)!) as {
        readConfig: (env: Record<string, string>) => Obj;
      };
      const config = readConfig(env);
      const rule = hostOriginRule({ listenHost: config.HOST, allowedHosts: config.ALLOWED_HOSTS });
      const refusal = (host: string) => rule({ headers: { host } } as Obj)?.code;
      const called =
        s.pattern === 'gateway' || s.pattern === 'coordinator'
          ? [`${s.id}.${NAMESPACE}.svc.cluster.local:${s.port}`, 'mcp.example.com']
          : [];
      if (s.pattern !== 'gateway' && s.pattern !== 'coordinator') called.push(new URL(gatewayUrls[`${envPrefix(s.id)}_URL`].value).host);
      for (const host of ['localhost', `${s.id}:${s.port}`, ...called])
        expect([s.id, host, refusal(host)]).toEqual([s.id, host, undefined]);
      for (const host of ['evil.example', `${s.id}.evil.example`, ...(s.pattern === 'gateway' ? [] : [`10.1.2.3:${s.port}`])])
        expect([s.id, host, refusal(host)]).toEqual([s.id, host, 'FORBIDDEN']);
      if (s.pattern === 'gateway') {
        expect(refusal(`10.1.2.3:${s.port}`)).toBeUndefined(); // the other instances forward to its pod address
        expect(config.MCP_INSTANCE_URL).toBe('http://10.1.2.3:7000/mcp');
        expect(config.SESSION_DATABASE_URL).toBe(sample.SESSION_DATABASE_URL);
      }
    }
  });

  it('take every secret from a Secret by secretKeyRef and write no secret value in any file', () => {
    const secrets = secretVariables();
    for (const s of composedServices()) {
      const c = containerOf(s.id);
      const names = new Set((secrets[s.id] ?? []).map((v) => v.name));
      expect([s.id, literalSecrets(c, names)]).toEqual([s.id, []]);
      for (const name of names)
        expect([s.id, name, envOf(s.id)[name]?.valueFrom.secretKeyRef.name]).toEqual([s.id, name, `${s.id}-secrets`]);
    }
    // the check finds a literal secret where there is one
    const planted = structuredClone(containerOf('security-mcp'));
    planted.env.push(
      { name: 'JWT_SECRET', value: 'hunter2hunter2' },
      { name: 'SOME_API_KEY', value: 'k' },
      { name: 'SECRETS_UI_URL', value: 'http://admin:pw@secrets-ui:10000' },
      { name: 'DATABASE_URL', value: 'postgres://fleet:pw@postgres:5432/fleet' },
    );
    expect(literalSecrets(planted, new Set(['JWT_SECRET', 'DATABASE_URL']))).toEqual([
      'JWT_SECRET',
      'SOME_API_KEY',
      'SECRETS_UI_URL',
      'DATABASE_URL',
    ]);
    for (const file of filesUnder(KUBERNETES_DIR)) {
      const text = fs.readFileSync(file, 'utf8');
      expect([file, /:\/\/[^:/\s@]+:[^@\s]+@/.test(text)]).toEqual([file, false]); // no user:password@ in a URL
      expect([file, /kind: Secret\b/.test(text), /stringData:|^data:\s*\n\s+[A-Za-z_]*(PASSWORD|SECRET|TOKEN)/m.test(text)]).toEqual([
        file,
        false,
        false,
      ]);
    }
    const pg = named('StatefulSet', 'postgres').spec.template.spec.containers[0];
    expect(pg.env.find((e: Obj) => e.name === 'POSTGRES_PASSWORD').valueFrom.secretKeyRef).toEqual({ name: 'postgres', key: 'password' });
  });

  it('deny by default and let only the gateway reach a tool service; clients reach the gateway and the coordinator', () => {
    const policies = ofKind('NetworkPolicy');
    const deny = named('NetworkPolicy', 'default-deny');
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const pods: Record<string, string>[] = [...ofKind('Deployment'), ...ofKind('StatefulSet')].map((w) => w.spec.template.metadata.labels);
    const gatewayPod = named('Deployment', GATEWAY_ID).spec.template.metadata.labels;
    for (const s of composedServices()) {
      const dst = named('Deployment', s.id).spec.template.metadata.labels;
      const admitted = admittedSources(policies, pods, dst, s.port);
      if (s.pattern === 'gateway' || s.pattern === 'coordinator') expect([s.id, admitted]).toEqual([s.id, 'any']);
      else expect([s.id, admitted]).toEqual([s.id, [gatewayPod]]);
      // nothing admitted on any other port
      expect([s.id, admittedSources(policies, pods, dst, 9999)]).toEqual([s.id, []]);
      const own = named('NetworkPolicy', s.id);
      expect(own.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      // DNS from everyone
      expect(own.spec.egress[0].ports).toEqual([
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ]);
    }
    // the engines admit only the services that use them
    for (const [engine, port, users] of [
      [
        'postgres',
        5432,
        [
          GATEWAY_ID,
          ...composedServices()
            .filter((s) => s.backends.includes('postgres'))
            .map((s) => s.id),
        ],
      ],
      [
        'redis',
        6379,
        [
          GATEWAY_ID,
          ...composedServices()
            .filter((s) => s.backends.includes('redis'))
            .map((s) => s.id),
        ],
      ],
    ] as const) {
      const admitted = admittedSources(policies, pods, named('StatefulSet', engine).spec.template.metadata.labels, port);
      expect((admitted as Record<string, string>[]).map((p) => p['app.kubernetes.io/name']).sort()).toEqual([...users].sort());
    }
  });

  it('let each service out only where its backends are: the gateway to the tool services, its peers, PostgreSQL and Redis; the internet never to private ranges', () => {
    const egress = (id: string) => named('NetworkPolicy', id).spec.egress as Obj[];
    const ports = (id: string) => new Set(egress(id).flatMap((r) => (r.ports ?? []).map((p: Obj) => p.port)));
    for (const p of [5432, 6379, 7001, 7000]) expect(ports(GATEWAY_ID).has(p)).toBe(true);
    expect(ports('memory-mcp').has(5432)).toBe(true);
    expect(ports('cache-mcp-wrapper').has(6379)).toBe(true);
    expect(ports('mqtt-mcp').has(1883)).toBe(true);
    // a service without network backends reaches DNS only
    expect(egress('filesystem-mcp')).toHaveLength(1);
    expect(egress('system-mcp')).toHaveLength(1);
    for (const np of ofKind('NetworkPolicy'))
      for (const rule of np.spec.egress ?? [])
        for (const peer of rule.to ?? [])
          if (peer.ipBlock?.cidr === '0.0.0.0/0')
            expect(peer.ipBlock.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '169.254.0.0/16', '192.168.0.0/16']));
    // network-mcp's purpose is the internet: it has a rule to it, and no rule to the cluster's pods
    expect(egress('network-mcp').some((r) => r.to?.[0]?.ipBlock?.cidr === '0.0.0.0/0')).toBe(true);
    expect(egress('network-mcp').some((r) => r.to?.some((p: Obj) => p.podSelector))).toBe(false);
  });
});
