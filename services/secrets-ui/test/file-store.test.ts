import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { FileSecretStore } from '../src/store';
import { describeSecretStoreBehaviour } from './store-behaviour';

const tmp = tempDir('secrets-file-store-');
const tokenFile = path.join(tmp.dir, 'token');
fs.writeFileSync(tokenFile, 'the-store-token-0123456789\n', { mode: 0o600 });
afterAll(() => tmp.cleanup());

describeSecretStoreBehaviour('FileSecretStore', () => new FileSecretStore(path.join(tmp.dir, 'store'), tokenFile));

describe('FileSecretStore on disk', () => {
  const dir = path.join(tmp.dir, 'disk');
  const store = new FileSecretStore(dir, tokenFile);

  it('writes one mode-600 file per service with no value in clear text', async () => {
    await store.write('security-mcp', { JWT_SECRET: 'plain-text-must-not-appear' });
    const file = store.location('security-mcp');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain('plain-text-must-not-appear');
    expect(text).not.toContain(Buffer.from('plain-text-must-not-appear').toString('base64'));
    expect(JSON.parse(text)).toMatchObject({ format: 'secrets-ui-file/v1', service: 'security-mcp', version: 1 });
    // no temporary files are left behind by the atomic write
    expect(fs.readdirSync(dir)).toEqual(['security-mcp.enc.json']);
  });

  it('refuses to open with another token', async () => {
    const other = path.join(tmp.dir, 'other-token');
    fs.writeFileSync(other, 'a-different-token-98765\n');
    await expect(new FileSecretStore(dir, other).read('security-mcp')).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('refuses a file altered on disk, rolled back to another version or copied to another service', async () => {
    const file = store.location('security-mcp');
    const sealed = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...sealed, version: 7 }));
    await expect(store.read('security-mcp')).rejects.toMatchObject({ code: 'CONFLICT' });
    fs.writeFileSync(store.location('memory-mcp'), JSON.stringify({ ...sealed, service: 'memory-mcp' }));
    await expect(store.read('memory-mcp')).rejects.toMatchObject({ code: 'CONFLICT' });
    const data = Buffer.from(sealed.data, 'base64');
    data[0] ^= 1;
    fs.writeFileSync(file, JSON.stringify({ ...sealed, data: data.toString('base64') }));
    await expect(store.read('security-mcp')).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('answers NOT_CONFIGURED naming the token file when it is missing or empty', async () => {
    const missing = new FileSecretStore(path.join(tmp.dir, 'x'), path.join(tmp.dir, 'no-such-token'));
    await expect(missing.ping()).rejects.toMatchObject({ code: 'NOT_CONFIGURED', message: expect.stringContaining('no-such-token') });
    const empty = path.join(tmp.dir, 'empty-token');
    fs.writeFileSync(empty, '\n');
    await expect(new FileSecretStore(path.join(tmp.dir, 'y'), empty).write('a', { K: 'v' })).rejects.toMatchObject({
      code: 'NOT_CONFIGURED',
    });
  });
});
