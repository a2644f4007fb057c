/**
 * End to end against real servers started here: Dovecot (IMAP + LMTP) with a temporary Maildir
 * and an SMTP server that hands every message to Dovecot's LMTP (packages/testing/src/mail.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ImapFlow } from 'imapflow';
import request from 'supertest';
import { describeWithProgram, tempDir, testEnv, testLogger } from '@mcp-fleet/testing';
import { DOVECOT_LMTP, imapClient, startMailServers, type MailServers } from '@mcp-fleet/testing/mail';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

type App = Awaited<ReturnType<typeof createApp>>;

describeWithProgram('dovecot', 'dovecot-imapd', 'mail-mcp against Dovecot', () => {
  describeWithProgram(DOVECOT_LMTP, 'dovecot-lmtpd', 'delivering over LMTP', () => {
    let servers: MailServers;
    let svc: App;
    let imap: ImapFlow;
    const tmp = tempDir('mail-e2e-');
    const ws = path.join(tmp.dir, 'ws');
    const outside = path.join(tmp.dir, 'outside');
    const attachmentBytes = randomBytes(48 * 1024);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

    const post = (route: string, body: object) => request(svc.app).post(route).send(body);
    const search = async (body: Record<string, unknown>) => (await post('/mail/search', body).expect(200)).body.result;
    const count = async (body: Record<string, unknown>) => (await post('/mail/count', body).expect(200)).body.result.count as number;

    beforeAll(async () => {
      fs.mkdirSync(ws);
      fs.mkdirSync(outside);
      fs.writeFileSync(path.join(ws, 'report.bin'), attachmentBytes);
      fs.writeFileSync(path.join(ws, 'big.bin'), randomBytes(300 * 1024));
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'escape.txt'));
      servers = await startMailServers();
      const config = readConfig(
        testEnv({
          WORKSPACE_ROOTS: ws,
          IMAP_URL: servers.imapUrl,
          SMTP_URL: servers.smtpUrl,
          MAIL_USER: servers.user,
          MAIL_PASSWORD: servers.password,
          MAIL_FROM: `Fleet Tester <${servers.user}>`,
          MAIL_SENT_FOLDER: 'Sent',
          MAIL_MAX_ATTACHMENT_BYTES: String(200 * 1024),
          MAIL_MAX_BODY_BYTES: String(64 * 1024),
        }),
      );
      svc = await createApp({ config, logger: testLogger(), defaultMetrics: false });
      imap = await imapClient(servers);
    }, 30_000);

    afterAll(async () => {
      await imap?.logout().catch(() => undefined);
      await svc?.close();
      await servers?.stop();
      tmp.cleanup();
    });

    it('reports both servers healthy', async () => {
      const res = await request(svc.app).get('/health').expect(200);
      expect(res.body.status).toBe('healthy');
      expect(res.body.checks.imap.detail).toEqual({ server: servers.imapUrl, gmail: false });
      expect(JSON.stringify(res.body)).not.toContain(servers.password);
    });

    const subject = `Quarterly report — Grüße, 你好 ${randomBytes(3).toString('hex')}`;
    let sentMessageId: string;
    let emailId: string;

    it('sends a UTF-8 subject with an attachment, finds it, reads it and fetches the attachment bytes', async () => {
      const sent = await post('/mail/send', {
        to: [{ name: 'Tëster', address: servers.user }],
        cc: 'Copy <cc@example.net>',
        bcc: 'hidden@example.net',
        subject,
        text: 'Hello,\nthe report is attached.\n— fleet',
        html: '<p>Hello,<br>the <b>report</b> is attached.</p>',
        attachments: [{ path: 'report.bin', filename: 'report-Q3.bin' }],
      }).expect(200);
      sentMessageId = sent.body.result.messageId;
      expect(sent.body.result.accepted).toEqual(expect.arrayContaining([servers.user, 'cc@example.net', 'hidden@example.net']));
      expect(sent.body.result.sentCopy).toMatchObject({ folder: 'Sent', id: expect.any(String) });
      expect(servers.received.at(-1)!.to).toContain('hidden@example.net');

      const found = await search({ subject: 'Grüße, 你好' });
      expect(found.total).toBe(1);
      const hit = found.messages[0];
      emailId = hit.id;
      expect(hit).toMatchObject({ subject, messageId: sentMessageId, unread: true, hasAttachments: true, folder: 'INBOX' });
      expect(hit.from[0]).toEqual({ name: 'Fleet Tester', address: servers.user });

      const got = (await request(svc.app).get(`/mail/email/${emailId}`).expect(200)).body.result;
      expect(got.subject).toBe(subject);
      expect(got.text.trim()).toBe('Hello,\nthe report is attached.\n— fleet');
      expect(got.html).toBeUndefined();
      expect(got.hasHtml).toBe(true);
      expect(got.to).toEqual([{ name: 'Tëster', address: servers.user }]);
      expect(got.cc).toEqual([{ name: 'Copy', address: 'cc@example.net' }]);
      expect(got.headers.some((h: { name: string }) => h.name.toLowerCase() === 'bcc')).toBe(false);
      expect(got.attachments).toHaveLength(1);
      const att = got.attachments[0];
      expect(att).toMatchObject({ filename: 'report-Q3.bin', size: attachmentBytes.length, sha256: sha(attachmentBytes) });
      expect(got.unread).toBe(true); // reading does not mark it seen

      const withHtml = (await request(svc.app).get(`/mail/email/${emailId}`).query({ includeHtml: true }).expect(200)).body.result;
      expect(withHtml.html).toContain('<b>report</b>');

      const bytes = (await request(svc.app).get(`/mail/email/${emailId}/attachments/${att.id}`).expect(200)).body.result.attachment;
      expect(Buffer.from(bytes.contentBase64, 'base64').equals(attachmentBytes)).toBe(true);
      const viaQuery = await request(svc.app).get(`/mail/email/${emailId}`).query({ attachmentId: att.id }).expect(200);
      expect(viaQuery.body.result.attachment.sha256).toBe(sha(attachmentBytes));

      expect(await count({ folder: 'Sent', subject: 'Grüße' })).toBe(1);
      expect(await count({ hasAttachment: true })).toBeGreaterThanOrEqual(1);
      expect(await count({ body: 'report is attached', from: servers.user })).toBe(1);
    });

    it('threads a reply with In-Reply-To and References', async () => {
      await post('/mail/send', { to: servers.user, subject: `Re: ${subject}`, text: 'Thanks!', inReplyTo: sentMessageId }).expect(200);
      const [reply] = (await search({ subject: `Re: ${subject}` })).messages;
      const got = (await request(svc.app).get(`/mail/email/${reply.id}`).expect(200)).body.result;
      expect(got.inReplyTo).toBe(sentMessageId);
      expect(got.references).toEqual([sentMessageId]);
      expect(got.attachments).toEqual([]);
      expect((await search({ subject, hasAttachment: false })).messages.map((m: { id: string }) => m.id)).toEqual([reply.id]);
    });

    it('creates and applies labels: keywords, flags and a folder label', async () => {
      const created = await post('/mail/labels', { name: 'Projects' }).expect(200);
      expect(created.body.result).toMatchObject({ name: 'Projects', kind: 'folder', created: true });
      expect((await post('/mail/labels', { name: 'Projects' }).expect(409)).body.code).toBe('CONFLICT');
      expect((await post('/mail/labels', { name: 'todo', kind: 'keyword' }).expect(200)).body.result.kind).toBe('keyword');

      const applied = await post('/mail/labels/apply', { ids: [emailId], add: ['todo', '\\Flagged', 'Projects'] }).expect(200);
      expect(applied.body.result.copies).toEqual([{ id: emailId, folder: 'Projects', copy: expect.any(String) }]);
      expect(await count({ label: 'todo' })).toBe(1);
      expect(await count({ flagged: true })).toBe(1);
      expect(await count({ folder: 'Projects' })).toBe(1);
      const [hit] = (await search({ label: 'todo' })).messages;
      expect(hit.labels).toContain('todo');
      expect(hit.flagged).toBe(true);

      const labels = (await request(svc.app).get('/mail/labels').query({ withCounts: true }).expect(200)).body.result;
      expect(labels.gmail).toBe(false);
      expect(labels.labels).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'INBOX', kind: 'folder' }),
          expect.objectContaining({ name: 'Projects', kind: 'folder', messages: 1 }),
          expect.objectContaining({ name: 'Sent', specialUse: '\\Sent' }),
          { name: 'todo', kind: 'keyword' },
        ]),
      );

      await post('/mail/labels/apply', { ids: [emailId], remove: ['todo'] }).expect(200);
      expect(await count({ label: 'todo' })).toBe(0);
      const folderRemove = await post('/mail/labels/apply', { ids: [emailId], remove: ['Projects'] }).expect(400);
      expect(folderRemove.body.error).toMatch(/mail_move/);
      const badKeyword = await post('/mail/labels/apply', { ids: [emailId], add: ['two words'] }).expect(400);
      expect(badKeyword.body.code).toBe('VALIDATION_ERROR');
      expect((await post('/mail/labels/apply', { ids: [emailId], add: ['\\Deleted'] }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    });

    it('forwards inline (with the attachment) and as message/rfc822', async () => {
      const fwd = await post('/mail/forward', { email_id: emailId, to: servers.user, text: 'FYI, see below.' }).expect(200);
      expect(fwd.body.result.accepted).toEqual([servers.user]);
      const [inline] = (await search({ subject: `Fwd: ${subject}` })).messages;
      const got = (await request(svc.app).get(`/mail/email/${inline.id}`).expect(200)).body.result;
      expect(got.text).toMatch(/^FYI, see below\.\n\n---------- Forwarded message ----------\nFrom: "Fleet Tester"/);
      expect(got.text).toContain('the report is attached.');
      expect(got.references).toEqual([sentMessageId]);
      expect(got.attachments.map((a: { sha256: string }) => a.sha256)).toEqual([sha(attachmentBytes)]);

      await post('/mail/forward', { email_id: emailId, to: servers.user, mode: 'attachment', subject: `As attachment ${subject}` }).expect(
        200,
      );
      const [attached] = (await search({ subject: `As attachment ${subject}` })).messages;
      const got2 = (await request(svc.app).get(`/mail/email/${attached.id}`).expect(200)).body.result;
      expect(got2.attachments[0].contentType).toBe('message/rfc822');
    });

    it('moves a message, answers its new id, and counts follow', async () => {
      await post('/mail/labels', { name: 'Archive' }).expect(200);
      const before = await count({});
      const moved = (await post('/mail/move', { ids: [emailId], folder: 'Archive' }).expect(200)).body.result;
      const newId = moved.moved[0].to;
      expect(newId).toEqual(expect.any(String));
      expect(await count({})).toBe(before - 1);
      expect(await count({ folder: 'Archive' })).toBe(1);
      const gone = await request(svc.app).get(`/mail/email/${emailId}`).expect(404);
      expect(gone.body.code).toBe('NOT_FOUND');
      const there = (await request(svc.app).get(`/mail/email/${newId}`).expect(200)).body.result;
      expect(there).toMatchObject({ folder: 'Archive', subject });
      expect((await post('/mail/move', { ids: [emailId], folder: 'Archive' }).expect(404)).body.details.missing).toEqual([emailId]);
      emailId = newId;
    });

    // Before any failed login: Dovecot slows later logins from an address after a failure (auth penalty).
    it('closes a connection whose call timed out, so a stuck server cannot exhaust the pool', async () => {
      // A TCP proxy in front of Dovecot that can freeze the connections open so far (new ones pass).
      const frozen: net.Socket[] = [];
      const live = new Set<net.Socket>();
      const proxy = net.createServer((client) => {
        const upstream = net.connect(servers.imapPort, '127.0.0.1');
        client.pipe(upstream);
        upstream.pipe(client);
        live.add(client);
        const drop = () => {
          live.delete(client);
          client.destroy();
          upstream.destroy();
        };
        client.on('close', drop).on('error', drop);
        upstream.on('close', drop).on('error', drop);
        (client as net.Socket & { upstream?: net.Socket }).upstream = upstream;
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
      const port = (proxy.address() as net.AddressInfo).port;
      const stuck = await createApp({
        config: readConfig(
          testEnv({
            WORKSPACE_ROOTS: ws,
            IMAP_URL: `imap://127.0.0.1:${port}`,
            MAIL_USER: servers.user,
            MAIL_PASSWORD: servers.password,
            MAIL_POOL_SIZE: '1',
            TOOL_TIMEOUT_MS: '3000',
          }),
        ),
        logger: testLogger(),
        defaultMetrics: false,
      });
      try {
        expect((await request(stuck.app).post('/mail/count').send({}).expect(200)).body.result.count).toEqual(expect.any(Number));
        for (const c of live) {
          const up = (c as net.Socket & { upstream?: net.Socket }).upstream!;
          c.unpipe(up);
          up.unpipe(c);
          frozen.push(c);
        }
        expect((await request(stuck.app).post('/mail/count').send({}).expect(504)).body.code).toBe('TIMEOUT');
        // The only pooled connection was stuck; it was closed on the timeout, so this call gets a new one.
        expect((await request(stuck.app).post('/mail/count').send({}).expect(200)).body.result.count).toEqual(expect.any(Number));
        // Drain the frozen side: its end (the service closed it) then destroys the pair.
        for (const c of frozen) c.resume();
        for (let i = 0; i < 40 && !frozen.every((c) => c.destroyed); i++) await new Promise((r) => setTimeout(r, 50));
        expect(frozen.length).toBe(1);
        expect(frozen.every((c) => c.destroyed)).toBe(true);
      } finally {
        await stuck.close();
        for (const c of live) c.destroy();
        await new Promise((r) => proxy.close(r));
      }
    });

    it('refuses hostile and impossible requests with the documented codes', async () => {
      const send = (extra: Record<string, unknown>) => post('/mail/send', { to: servers.user, subject: 'x', text: 'x', ...extra });
      expect((await send({ attachments: [{ path: path.join(outside, 'secret.txt') }] }).expect(403)).body.code).toBe('FORBIDDEN');
      expect((await send({ attachments: [{ path: '../outside/secret.txt' }] }).expect(403)).body.code).toBe('FORBIDDEN');
      expect((await send({ attachments: [{ path: 'escape.txt' }] }).expect(403)).body.code).toBe('FORBIDDEN');
      expect((await send({ attachments: [{ path: 'missing.bin' }] }).expect(404)).body.code).toBe('NOT_FOUND');
      expect((await send({ attachments: [{ path: 'big.bin' }] }).expect(413)).body.code).toBe('PAYLOAD_TOO_LARGE');
      expect((await send({ text: 'x'.repeat(70 * 1024) }).expect(413)).body.code).toBe('PAYLOAD_TOO_LARGE');
      expect((await send({ attachments: [{ path: 'report.bin', filename: 'a\r\nContent-Type: text/html' }] }).expect(400)).body.code).toBe(
        'VALIDATION_ERROR',
      );
      expect((await post('/mail/search', { folder: 'No such folder' }).expect(404)).body.code).toBe('NOT_FOUND');
      expect((await post('/mail/move', { ids: [emailId], folder: 'Nowhere' }).expect(404)).body.code).toBe('NOT_FOUND');
      const [folder, validity] = emailId.split('.');
      expect((await request(svc.app).get(`/mail/email/${folder}.${validity}.999999`).expect(404)).body.code).toBe('NOT_FOUND');
      expect((await request(svc.app).get(`/mail/email/${emailId}/attachments/9`).expect(404)).body.code).toBe('NOT_FOUND');
      const stale = await request(svc.app)
        .get(`/mail/email/${folder}.${BigInt(validity) + 1n}.1`)
        .expect(409);
      expect(stale.body).toMatchObject({ code: 'CONFLICT' });
      expect(stale.body.error).toMatch(/UIDVALIDITY/);
      const unknownFolderId = `${Buffer.from('Ghost').toString('base64url')}.1.1`;
      expect((await request(svc.app).get(`/mail/email/${unknownFolderId}`).expect(404)).body.code).toBe('NOT_FOUND');
      // A bad id in a batch changes nothing.
      await post('/mail/labels/apply', { ids: [emailId, `${folder}.${validity}.999999`], add: ['batch'] }).expect(404);
      expect(await count({ folder: 'Archive', label: 'batch' })).toBe(0);
      // The server refuses a wrong password with a message that never contains it.
      const bad = await createApp({
        config: readConfig(
          testEnv({ WORKSPACE_ROOTS: ws, IMAP_URL: servers.imapUrl, MAIL_USER: servers.user, MAIL_PASSWORD: 'wrong-Pa55' }),
        ),
        logger: testLogger(),
        defaultMetrics: false,
      });
      try {
        const refused = await request(bad.app).post('/mail/count').send({}).expect(502);
        expect(refused.body.error).toMatch(/refused the login/);
        expect(JSON.stringify(refused.body)).not.toContain('wrong-Pa55');
      } finally {
        await bad.close();
      }
    });

    it('pages 1,000 messages newest first with stable cursors, and refuses ids after a UIDVALIDITY change', async () => {
      await post('/mail/labels', { name: 'Bulk' }).expect(200);
      const t0 = performance.now();
      const make = (i: number) =>
        [
          `From: Sender ${i % 7} <s${i % 7}@example.org>`,
          `To: ${servers.user}`,
          `Subject: bulk ${i}${i % 10 === 0 ? ' tenth' : ''}`,
          `Message-ID: <bulk-${i}@example.org>`,
          `Date: ${new Date(Date.UTC(2025, 0, 1, 0, i)).toUTCString()}`,
          'MIME-Version: 1.0',
          'Content-Type: text/plain; charset=utf-8',
          '',
          `message number ${i}`,
          '',
        ].join('\r\n');
      for (let start = 0; start < 1000; start += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, k) => imap.append('Bulk', make(start + k))));
      }
      expect(performance.now() - t0).toBeLessThan(20_000);
      expect(await count({ folder: 'Bulk' })).toBe(1000);

      const seen: number[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await search({ folder: 'Bulk', limit: 100, ...(cursor ? { cursor } : {}) });
        if (pages === 0) {
          expect(page.total).toBe(1000);
          // New mail arriving between pages does not shift the pages already handed out.
          await imap.append('Bulk', make(5001));
        }
        seen.push(...page.messages.map((m: { uid: number }) => m.uid));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor && pages < 20);
      expect(pages).toBe(10);
      expect(seen).toHaveLength(1000);
      expect(new Set(seen).size).toBe(1000);
      expect(seen).toEqual([...seen].sort((a, b) => b - a));
      const first = await search({ folder: 'Bulk', limit: 2 });
      expect(first.messages[0].subject).toBe('bulk 5001');
      expect(first.messages[1].subject).toBe('bulk 999');

      const tenth = await search({ folder: 'Bulk', subject: 'tenth', limit: 40 });
      expect(tenth.total).toBe(100);
      const rest = await search({ folder: 'Bulk', subject: 'tenth', limit: 500, cursor: tenth.nextCursor });
      expect(rest.messages).toHaveLength(60);
      expect(rest.nextCursor).toBeUndefined();
      const mixed = await post('/mail/search', { folder: 'Bulk', subject: 'other', cursor: tenth.nextCursor }).expect(400);
      expect(mixed.body.details[0].path).toBe('cursor');
      expect(await count({ folder: 'Bulk', from: 's3@example.org' })).toBe(144);
      await imap.append('Bulk', make(7000), [], new Date('2020-06-15T12:00:00Z'));
      expect(await count({ folder: 'Bulk', before: '2021-01-01' })).toBe(1);
      expect(await count({ folder: 'Bulk', since: '2020-06-01', before: '2020-07-01T00:00:00Z' })).toBe(1);
      expect(await count({ folder: 'Bulk', unread: true })).toBe(1002);
      expect(await count({ folder: 'Bulk', unread: false })).toBe(0);
      expect(await count({ folder: 'Bulk', text: 'message number 7000' })).toBe(1);
      expect(await count({ folder: 'Bulk', to: servers.user, since: '2021-01-01' })).toBe(1001);

      // Deleting and recreating the folder gives it a new UIDVALIDITY: old ids and cursors are refused.
      const oldId = first.messages[1].id;
      await imap.mailboxDelete('Bulk');
      await imap.mailboxCreate('Bulk');
      await imap.append('Bulk', make(1));
      const stale = await request(svc.app).get(`/mail/email/${oldId}`).expect(409);
      expect(stale.body.error).toMatch(/renumbered/);
      expect((await post('/mail/search', { folder: 'Bulk', cursor: first.nextCursor, limit: 2 }).expect(409)).body.code).toBe('CONFLICT');
    }, 60_000);
  });
});
