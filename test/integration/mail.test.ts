/**
 * mail-mcp through the real fleet: the launcher starts it and the gateway with IMAP_URL/SMTP_URL
 * pointing at a Dovecot + SMTP pair started here; the gateway lists its tools, routes native and
 * JSON-RPC calls to it, and reports both mail servers in /providers without their credentials.
 */
import path from 'node:path';
import { describeWithProgram, tempDir } from '@mcp-fleet/testing';
import { DOVECOT_LMTP, startMailServers, type MailServers } from '@mcp-fleet/testing/mail';
import { getJson, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

describeWithProgram('dovecot', 'dovecot-imapd', 'mail-mcp through the fleet', () => {
  describeWithProgram(DOVECOT_LMTP, 'dovecot-lmtpd', 'with Dovecot', () => {
    let servers: MailServers;
    let fleet: FleetHandle;
    const tmp = tempDir('mail-fleet-');

    beforeAll(async () => {
      servers = await startMailServers();
      const creds = `${encodeURIComponent(servers.user)}:${encodeURIComponent(servers.password)}@`;
      fleet = await startFleet({
        dataDir: path.join(tmp.dir, 'data'),
        workspace: path.join(tmp.dir, 'ws'),
        only: ['mail-mcp'],
        env: {
          // Credentials in the URLs: the gateway's /providers and every answer must leave them out.
          IMAP_URL: servers.imapUrl.replace('imap://', `imap://${creds}`),
          SMTP_URL: servers.smtpUrl.replace('smtp://', `smtp://${creds}`),
          MAIL_FROM: servers.user,
        },
      });
      await waitFor('mail tools in the gateway catalog', async () => {
        const { body } = await getJson(`${fleet.gateway}/tools/list`);
        return body.tools.some((t: { name: string }) => t.name === 'mail_search');
      });
    }, 120_000);

    afterAll(async () => {
      await fleet?.stop();
      await servers?.stop();
      tmp.cleanup();
    }, 60_000);

    it('lists every mail tool in the gateway catalog with its schema', async () => {
      const { body } = await getJson(`${fleet.gateway}/tools/list`);
      const mail = body.tools.filter((t: { name: string }) => t.name.startsWith('mail_'));
      expect(mail.map((t: { name: string }) => t.name).sort()).toEqual(
        [
          'mail_count',
          'mail_forward',
          'mail_get',
          'mail_label_apply',
          'mail_label_create',
          'mail_labels',
          'mail_move',
          'mail_search',
          'mail_send',
        ].sort(),
      );
      const search = mail.find((t: { name: string }) => t.name === 'mail_search');
      expect(search.inputSchema.properties.subject.description).toMatch(/subject/i);
    });

    it('sends through the gateway (native) and finds the message through JSON-RPC', async () => {
      const sent = await postJson(`${fleet.gateway}/mcp`, {
        tool: 'mail_send',
        arguments: { to: servers.user, subject: 'via the gateway ✓', text: 'routed' },
      });
      expect(sent.status).toBe(200);
      expect(sent.body.result.accepted).toEqual([servers.user]);
      const rpc = await postJson(`${fleet.gateway}/mcp`, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'mail_search', arguments: { subject: 'via the gateway' } },
      });
      expect(rpc.body.result.isError).toBe(false);
      expect(rpc.body.result.structuredContent.messages[0]).toMatchObject({ subject: 'via the gateway ✓', unread: true });
      const direct = await postJson(`${fleet.serviceUrl('mail-mcp', 7015)}/mail/count`, { subject: 'via the gateway' });
      expect(direct.body.result.count).toBe(1);
    });

    it('reports both mail servers in /providers, reachable, without credentials', async () => {
      const { body } = await getJson(`${fleet.gateway}/providers`);
      const mail = body.providers.filter((p: { kind: string }) => p.kind === 'mail');
      expect(mail).toEqual([
        expect.objectContaining({ id: 'smtp', configured: true, reachable: true, url: servers.smtpUrl }),
        expect.objectContaining({ id: 'imap', configured: true, reachable: true, url: servers.imapUrl }),
      ]);
      const health = await getJson(`${fleet.serviceUrl('mail-mcp', 7015)}/health`);
      expect(health.body.status).toBe('healthy');
      expect(JSON.stringify([body, health.body])).not.toContain(servers.password);
    });
  });
});
