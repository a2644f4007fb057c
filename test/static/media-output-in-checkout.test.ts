/**
 * Regression: `./fleet up` in a checkout made media_process write into media-output/ at the
 * repository root, which then showed as untracked files (and could be committed). The outputs stay
 * in the first workspace root, where the file tools read them (docs/decisions.md), and git ignores them.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { configSchema } from '../../services/media-mcp/src/config';
import { planFleet, REPO_ROOT } from '../../scripts/fleet/plan';

describe("media-mcp's default output folder in a checkout", () => {
  it('is inside the workspace root the launcher gives by default (the checkout) and ignored by git there', () => {
    const plan = planFleet({ env: { ...process.env, WORKSPACE_ROOTS: '', FLEET_DATA_DIR: '/tmp/media-output-plan' }, only: ['media-mcp'] });
    const media = plan.specs.find((s) => s.entry.id === 'media-mcp')!;
    expect(media.env.WORKSPACE_ROOTS).toBe(REPO_ROOT);
    const dir = configSchema.parse({}).MEDIA_OUTPUT_DIR;
    expect(path.isAbsolute(dir)).toBe(false);
    for (const file of ['clip-trim.mp4', 'nested/frame.png', '.x1y2.partial.webp']) {
      const output = path.join(REPO_ROOT, dir, file);
      // exit 0 (and the path printed) when git ignores it; a non-zero exit fails the test
      expect(execFileSync('git', ['check-ignore', output], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()).toBe(output);
    }
  });
});
