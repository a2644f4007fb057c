/**
 * TLS to real servers: Dovecot and the SMTP server of packages/testing/src/mail.ts with a
 * self-signed certificate, reached over imaps/smtps (TLS from the first byte) and over
 * imap/smtp with STARTTLS. An untrusted certificate is refused with an error that says what to do.
 */
import fs from 'node:fs';
import request from 'supertest';
import { describeWithProgram, testEnv, testLogger } from '@mcp-fleet/testing';
import { DOVECOT_LMTP, startMailServers, type MailServers } from '@mcp-fleet/testing/mail';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

type App = Awaited<ReturnType<typeof createApp>>;

describeWithProgram('dovecot', 'dovecot-imapd', 'mail-mcp over TLS', () => {
  describeWithProgram(DOVECOT_LMTP, 'dovecot-lmtpd', 'with Dovecot and LMTP delivery', () => {
    let servers: MailServers;
    const apps: App[] = [];

    const mailApp = async (env: Record<string, string>) => {
      const config = readConfig(
        testEnv({ MAIL_USER: servers.user, MAIL_PASSWORD: servers.password, MAIL_FROM: `TLS Tester <${servers.user}>`, ...env }),
      );
      const svc = await createApp({ config, logger: testLogger(), defaultMetrics: false });
      apps.push(svc);
      return svc;
    };
    const tlsLogins = () => (fs.readFileSync(servers.logFile, 'utf8').match(/imap-login: Info: Login: .*\bTLS\b/g) ?? []).length;

    beforeAll(async () => {
      servers = await startMailServers({ tls: true });
    }, 30_000);

    afterAll(async () => {
      for (const a of apps) await a.close();
      await servers?.stop();
    });

    it.each([
      ['sends over smtps and reads over imaps (TLS from the first byte)', 'imapsUrl', 'smtpsUrl', 'over smtps'],
      ['upgrades plain imap:// and smtp:// with STARTTLS when the server offers it', 'imapUrl', 'smtpUrl', 'over starttls'],
    ] as const)('%s', async (_title, imap, smtp, subject) => {
      const svc = await mailApp({ IMAP_URL: servers[imap]!, SMTP_URL: servers[smtp]!, MAIL_TLS_INSECURE: '1' });
      const before = tlsLogins();
      await request(svc.app).post('/mail/send').send({ to: servers.user, subject, text: 'sealed' }).expect(200);
      const found = await request(svc.app).post('/mail/search').send({ subject }).expect(200);
      expect(found.body.result.messages).toHaveLength(1);
      // Dovecot ends the login line of a session inside TLS with "TLS".
      expect(tlsLogins()).toBeGreaterThan(before);
    });

    it('refuses a certificate it cannot verify, saying how to trust it, on both protocols', async () => {
      const svc = await mailApp({ IMAP_URL: servers.imapsUrl!, SMTP_URL: servers.smtpsUrl! });
      const read = await request(svc.app).post('/mail/search').send({ subject: 'anything' });
      expect(read.status).toBe(502);
      expect(read.body).toMatchObject({ code: 'UPSTREAM_ERROR' });
      expect(read.body.error).toMatch(/IMAP server .* does not trust .*NODE_EXTRA_CA_CERTS.*MAIL_TLS_INSECURE=1/);
      const send = await request(svc.app).post('/mail/send').send({ to: servers.user, subject: 'never', text: 'x' });
      expect(send.status).toBe(502);
      expect(send.body.error).toMatch(/SMTP server .* does not trust .*MAIL_TLS_INSECURE=1/);
      // and nothing was delivered
      const trusted = await mailApp({ IMAP_URL: servers.imapsUrl!, MAIL_TLS_INSECURE: '1' });
      const none = await request(trusted.app).post('/mail/search').send({ subject: 'never' }).expect(200);
      expect(none.body.result.messages).toHaveLength(0);
    });

    it('trusts the certificate when its CA is given to Node (NODE_EXTRA_CA_CERTS), without MAIL_TLS_INSECURE', async () => {
      // NODE_EXTRA_CA_CERTS is read at process start, so a child process checks it.
      const ca = `${servers.logFile}.ca.pem`;
      fs.writeFileSync(ca, servers.certPem!);
      const { spawnSync } = await import('node:child_process');
      const script = `
        const tls = require('node:tls');
        const s = tls.connect({ host: '127.0.0.1', port: ${new URL(servers.imapsUrl!).port} }, () => { console.log(s.authorized ? 'trusted' : 'untrusted'); s.end(); });
        s.on('error', (e) => { console.log('error ' + e.code); });`;
      const out = spawnSync(process.execPath, ['-e', script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: ca },
        encoding: 'utf8',
        timeout: 10_000,
      });
      expect(out.stdout.trim()).toBe('trusted');
    });
  });
});
