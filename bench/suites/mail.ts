/**
 * mail-mcp against a real Dovecot (started here, as the tests do): search latency over a
 * 10,000-message folder through POST /mail/search and /mail/count, with the same IMAP searches
 * made directly with imapflow as the baseline; and sends per second through POST /mail/send
 * (SMTP -> LMTP -> Dovecot), with nodemailer sending straight to the same SMTP server as baseline.
 */
import { randomBytes } from 'node:crypto';
import { freePort, imapClient, smtpTransport, startMailServers } from '@mcp-fleet/testing/mail';
import { markdownTable, runLoad, startServiceProcess, stopProcesses, summarize, type LoadResult } from '../lib';

const MESSAGES = 10_000;
const FOLDER = 'Bench';
const WORDS = ['invoice', 'meeting', 'report', 'launch', 'budget', 'review', 'travel', 'hiring', 'design', 'incident'];

function message(i: number): string {
  const w = WORDS[i % WORDS.length];
  const date = new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toUTCString();
  const head = [
    `From: Sender ${i % 50} <sender${i % 50}@example.org>`,
    'To: tester@example.test',
    `Subject: ${w} ${i}${i % 100 === 0 ? ' quarterly-summary' : ''}`,
    `Message-ID: <bench-${i}@example.org>`,
    `Date: ${date}`,
    'MIME-Version: 1.0',
  ];
  const body = `Hello,\r\n\r\nthis is message ${i} about the ${w}. ${i % 250 === 0 ? 'Needle-phrase inside. ' : ''}${'Lorem ipsum dolor sit amet. '.repeat(8)}\r\n`;
  if (i % 20 !== 0) return [...head, 'Content-Type: text/plain; charset=utf-8', '', body].join('\r\n');
  const b = `b${i}`;
  return [
    ...head,
    `Content-Type: multipart/mixed; boundary="${b}"`,
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    `--${b}`,
    `Content-Type: application/octet-stream; name="file-${i}.bin"`,
    `Content-Disposition: attachment; filename="file-${i}.bin"`,
    'Content-Transfer-Encoding: base64',
    '',
    randomBytes(600).toString('base64'),
    `--${b}--`,
    '',
  ].join('\r\n');
}

async function timeLoop(fn: () => Promise<unknown>, durationMs: number): Promise<LoadResult> {
  for (const until = performance.now() + 300; performance.now() < until;) await fn();
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  while (performance.now() - start < durationMs) {
    const t0 = performance.now();
    try {
      await fn();
      latencies.push(performance.now() - t0);
    } catch {
      errors += 1;
    }
  }
  return summarize(latencies, (performance.now() - start) / 1000, 1, errors);
}

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const cellMs = Math.min(options.durationMs, 1500);
  const servers = await startMailServers({ user: 'tester@example.test' });
  const rows: { what: string; via: string; result: LoadResult }[] = [];
  let child: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
  let imap: Awaited<ReturnType<typeof imapClient>> | undefined;
  try {
    imap = await imapClient(servers);
    const client = imap;
    const t0 = performance.now();
    servers.fillMaildir(
      (function* () {
        for (let i = 0; i < MESSAGES; i++) yield message(i);
      })(),
      FOLDER,
    );
    const fillMs = performance.now() - t0;
    const t1 = performance.now();
    await client.mailboxOpen(FOLDER);
    const indexMs = performance.now() - t1;
    process.stdout.write(
      `mail: wrote ${MESSAGES} Maildir files in ${Math.round(fillMs)} ms; Dovecot indexed them in ${Math.round(indexMs)} ms\n`,
    );

    const port = await freePort();
    child = await startServiceProcess(
      'mail-mcp',
      {
        IMAP_URL: servers.imapUrl,
        SMTP_URL: servers.smtpUrl,
        MAIL_USER: servers.user,
        MAIL_PASSWORD: servers.password,
        MAIL_POOL_SIZE: '4',
      },
      port,
    );
    const origin = `http://127.0.0.1:${port}`;
    const call = async (route: string, body: unknown) => {
      const res = await fetch(`${origin}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { result: { nextCursor?: string; messages: unknown[]; total?: number; count?: number } };
    };
    let cursor: string | undefined;
    for (let p = 0; p < 10; p++)
      cursor = (await call('/mail/search', { folder: FOLDER, limit: 50, ...(cursor ? { cursor } : {}) })).result.nextCursor;
    const sanity = await call('/mail/search', { folder: FOLDER, subject: 'quarterly-summary', limit: 500 });
    if (sanity.result.total !== MESSAGES / 100)
      throw new Error(`expected ${MESSAGES / 100} quarterly-summary hits, got ${sanity.result.total}`);

    const searches: [string, Record<string, unknown>, number[]][] = [
      ['newest 50 (no filter)', { folder: FOLDER, limit: 50 }, [1, 4]],
      ['page 11 via cursor', { folder: FOLDER, limit: 50, cursor }, [1]],
      ['subject substring (100 hits)', { folder: FOLDER, subject: 'quarterly-summary', limit: 50 }, [1, 4]],
      ['from (200 hits)', { folder: FOLDER, from: 'sender7@example.org', limit: 50 }, [1]],
      ['body text (40 hits, no FTS)', { folder: FOLDER, body: 'Needle-phrase', limit: 50 }, [1]],
      ['hasAttachment (BODYSTRUCTURE scan)', { folder: FOLDER, hasAttachment: true, limit: 50 }, [1]],
    ];
    const ok = (b: string, s: number) => s === 200 && b.includes('"success":true');
    for (const [what, body, concurrencies] of searches) {
      for (const c of concurrencies) {
        const result = await runLoad(origin, { path: '/mail/search', body: JSON.stringify(body), check: ok }, c, cellMs, 300);
        rows.push({ what, via: `mail-mcp c=${c}`, result });
        process.stdout.write(
          `mail search ${what} c=${c}: p50 ${result.p50Ms} ms p99 ${result.p99Ms} ms ${result.throughput}/s errors ${result.errors}\n`,
        );
      }
    }
    const countResult = await runLoad(
      origin,
      { path: '/mail/count', body: JSON.stringify({ folder: FOLDER, subject: 'report' }), check: ok },
      1,
      cellMs,
      300,
    );
    rows.push({ what: 'count subject "report" (1,000)', via: 'mail-mcp c=1', result: countResult });

    // Baseline: the same IMAP work (UID SEARCH + FETCH of 50 summaries) straight from imapflow on one connection.
    const direct = async (q: Record<string, unknown>) => {
      const uids = ((await client.search(q, { uid: true })) || []).sort((a: number, b: number) => b - a).slice(0, 50);
      if (uids.length)
        await client.fetchAll(
          uids,
          { uid: true, flags: true, envelope: true, internalDate: true, size: true, bodyStructure: true },
          { uid: true },
        );
    };
    rows.push({ what: 'newest 50 (no filter)', via: 'imapflow direct', result: await timeLoop(() => direct({ all: true }), cellMs) });
    rows.push({
      what: 'subject substring (100 hits)',
      via: 'imapflow direct',
      result: await timeLoop(() => direct({ subject: 'quarterly-summary' }), cellMs),
    });

    // Sends per second: a 2 KB text message to the test user, delivered into Dovecot over LMTP.
    const text = 'Benchmark message body. '.repeat(80);
    const sendBody = JSON.stringify({ to: servers.user, from: servers.user, subject: 'bench send', text });
    for (const c of [1, 4]) {
      const result = await runLoad(origin, { path: '/mail/send', body: sendBody, check: ok }, c, cellMs, 300);
      rows.push({ what: 'send 2 KB text', via: `mail-mcp c=${c}`, result });
      process.stdout.write(`mail send c=${c}: ${result.throughput}/s p50 ${result.p50Ms} ms errors ${result.errors}\n`);
    }
    const transport = smtpTransport(servers);
    rows.push({
      what: 'send 2 KB text',
      via: 'nodemailer direct c=1',
      result: await timeLoop(() => transport.sendMail({ from: servers.user, to: servers.user, subject: 'bench direct', text }), cellMs),
    });
    transport.close();

    const markdown = [
      `### mail-mcp over Dovecot ${MESSAGES.toLocaleString('en')}-message folder (search) and SMTP→LMTP delivery (send)`,
      '',
      `Folder built by writing ${MESSAGES} Maildir files (${Math.round(fillMs)} ms) and indexed by Dovecot on first SELECT (${Math.round(indexMs)} ms); ` +
        '5% have an attachment. Searches are IMAP SEARCH on Dovecot without full-text indexes (substring scans), newest first, limit 50. ' +
        '"imapflow direct" is the same SEARCH + FETCH of 50 summaries from one imapflow connection in this run: the service overhead is the difference. ' +
        `Sends go through the service's pooled SMTP transport to the test SMTP server, which hands each message to Dovecot's LMTP before answering. Cells of ${cellMs} ms.`,
      '',
      markdownTable(
        ['operation', 'via', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'errors'],
        rows.map((r) => [r.what, r.via, r.result.throughput, r.result.p50Ms, r.result.p90Ms, r.result.p99Ms, r.result.errors]),
      ),
    ].join('\n');
    return { json: { messages: MESSAGES, fillMs: Math.round(fillMs), indexMs: Math.round(indexMs), rows }, markdown };
  } finally {
    await imap?.logout().catch(() => undefined);
    if (child) await stopProcesses([child]);
    await servers.stop();
  }
}
