/**
 * Regression: an install plan dropped a second request for a skill without a word. A skill's folder
 * holds one version, so every request for a skill is answered by one version that satisfies them
 * all, or the plan says none does and why.
 */
import request from 'supertest';
import type { MarketplaceApp } from '../src/app';
import { marketplace } from './shared';

let m: MarketplaceApp;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ m, cleanup } = await marketplace());
});
afterAll(() => cleanup());

// the sample catalog's commit-message has 1.0.0, 1.1.0 (latest) and 2.0.0-beta.1
const plan = async (skills: unknown[]) =>
  (await request(m.app).post('/skills/v1/install-plan').send({ skills, target: '/t' }).expect(200)).body.result;
const installed = (p: { install: { name: string; version: string }[] }) => p.install.map((i) => `${i.name}@${i.version}`);

describe('a skill asked for more than once', () => {
  it('gets the highest version every range allows, once, listing the ranges it answers', async () => {
    const p = await plan(['commit-message@^1.0', { name: 'commit-message', range: '~1.0.0' }, 'sql-review']);
    expect(installed(p)).toEqual(['commit-message@1.0.0', 'sql-review@0.3.0']);
    expect(p.install[0]).toMatchObject({ range: '^1.0', requested: ['^1.0', '~1.0.0'], destination: '/t/commit-message' });
    expect(p.install[1].requested).toBeUndefined();
    expect(p).toMatchObject({ unknown: [], unsatisfiable: [], complete: true });
  });

  it('asked for twice the same way, once (in any spelling of the default)', async () => {
    for (const skills of [
      ['commit-message', 'commit-message'],
      ['commit-message', { name: 'commit-message' }, 'commit-message@latest'],
    ]) {
      const p = await plan(skills);
      expect(installed(p)).toEqual(['commit-message@1.1.0']);
      expect(p.install[0].requested).toBeUndefined();
      expect(p.complete).toBe(true);
    }
  });

  it('when no version answers every range: unsatisfiable, saying what each range alone picks and what to do', async () => {
    for (const skills of [
      ['commit-message', 'commit-message@1.0.0'],
      ['commit-message@^1.0', { name: 'commit-message', range: '>=2.0.0-beta.1' }],
    ]) {
      const p = await plan(skills);
      expect(p.install).toEqual([]);
      expect(p.complete).toBe(false);
      expect(p.unsatisfiable).toHaveLength(1);
      const [u] = p.unsatisfiable;
      expect(u.name).toBe('commit-message');
      expect(u.available).toEqual(['2.0.0-beta.1', '1.1.0', '1.0.0']);
      expect(u.reason).toMatch(/no version satisfies every range asked for \(.+ alone picks .+, .+ alone picks .+\)/);
      expect(u.reason).toMatch(/ask for it once, with one range/);
    }
  });

  it('a malformed second range is listed as such while the valid one is installed', async () => {
    const p = await plan(['commit-message@^1.0', 'commit-message@=>bad']);
    expect(installed(p)).toEqual(['commit-message@1.1.0']);
    expect(p.unsatisfiable).toEqual([
      { name: 'commit-message', range: '=>bad', available: ['2.0.0-beta.1', '1.1.0', '1.0.0'], reason: 'not a semver version or range' },
    ]);
    expect(p.complete).toBe(false);
  });

  it('an unknown skill asked for twice is unknown once', async () => {
    const p = await plan(['ghost-skill@^1', 'ghost-skill@^2']);
    expect(p).toMatchObject({ install: [], unknown: ['ghost-skill'], unsatisfiable: [], complete: false });
  });
});
