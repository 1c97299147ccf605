import { createHash } from 'node:crypto';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  type DeviceSnapshot,
  subjects,
  type UsageAdmittedBatch,
  type UsageStarts,
  type UsageStartsBatch,
} from '@outreach/contracts';
import { streamNames } from '@outreach/platform';
import Redis from 'ioredis';
import { JSONCodec } from 'nats';
import { Client } from 'pg';
import { clearRedisPrefix } from '../../test/support/isolation';
import { lockWaiters } from '../../test/support/lock-waits';
import { monitorRedis } from '../../test/support/redis-monitor';
import { freePort } from '../../test/support/system';
import { recipient } from './support/fixtures';
import { type Harness, post, startHarness, waitFor } from './support/harness';

let h: Harness;
let db: Client;

beforeAll(async () => {
  // A long rebuild grace leaves the flush tests below a wide margin on a loaded machine.
  h = await startHarness({
    MESSAGES_PER_MINUTE: '5',
    COUNTER_REBUILD_GRACE_MS: '1000',
    USAGE_REPUBLISH_MS: '200',
    // Wide enough that starts sent together are written together on a loaded machine.
    GROUP_COMMIT_MS: '50',
    // Short, for the stuck write below; long enough that the writes the flush tests hold back
    // for a few hundred milliseconds are not cancelled on a loaded machine.
    DB_STATEMENT_TIMEOUT_MS: '2000',
    METRICS_PORT: String(await freePort()),
  });
  db = new Client({ connectionString: h.ns.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db.end();
  await h.close();
});

const conversationsOf = async (recipientId: string) =>
  Number(
    (await db.query('SELECT count(*) AS n FROM link.conversations WHERE recipient_id = $1', [recipientId]))
      .rows[0].n,
  );

/** Whether the usage batch is kept as confirmed by JetStream. */
const confirmed = async (batchId: string) =>
  (await db.query('SELECT 1 FROM link.usage_batches WHERE id = $1 AND confirmed_at IS NOT NULL', [batchId]))
    .rowCount === 1;

async function page(token: string, lang = 'en') {
  const res = await fetch(`${h.base}/i/${token}`, { headers: { 'accept-language': lang } });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** The refusal notice of a page: its code and its text, as the page shows it. */
function noticeOf(html: string) {
  const m = html.match(/<p class="notice" role="alert" data-code="([^"]*)"[^>]*>([^<]*)<\/p>/);
  return m ? { code: m[1], text: m[2] } : null;
}

/** A raw GET (fetch would decompress): status, headers and the bytes as sent. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }),
      );
    }).on('error', reject);
  });
}

describe('the chat page on the wire', () => {
  it('is compressed as the client allows, and its policy lets its own script run', async () => {
    const l = await h.link();
    const url = `${h.base}/i/${l.token}`;
    const plain = await rawGet(url, {});
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    const html = plain.bytes.toString('utf8');
    expect(html).toContain('<form id="chat"');

    const gzip = await rawGet(url, { 'accept-encoding': 'gzip, deflate' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.bytes).toString('utf8')).toBe(html);
    expect(
      (await rawGet(url, { 'accept-encoding': 'gzip, deflate, br, zstd' })).headers['content-encoding'],
    ).toBe('br');
    expect((await rawGet(url, { 'accept-encoding': 'br;q=0, gzip' })).headers['content-encoding']).toBe(
      'gzip',
    );
    const br = await rawGet(url, { 'accept-encoding': 'gzip;q=0, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.bytes).toString('utf8')).toBe(html);
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 2);
    expect(
      (await rawGet(url, { 'accept-encoding': 'identity' })).headers['content-encoding'],
    ).toBeUndefined();

    // Every visitor gets the same page and policy; the policy names the hash of the page's script.
    const script = html.match(/<script>([\s\S]*?)<\/script>/)?.[1] ?? '';
    const hash = createHash('sha256').update(script, 'utf8').digest('base64');
    expect(plain.headers['content-security-policy']).toContain(`script-src 'sha256-${hash}'`);
    expect(gzip.headers['content-security-policy']).toBe(plain.headers['content-security-policy']);
  });

  it('answers HEAD, a trailing slash and a query like the router did, and 405 for other methods', async () => {
    const l = await h.link();
    const url = `${h.base}/i/${l.token}`;
    const get = await fetch(url, { headers: { 'x-request-id': 'req-page-1' } });
    expect(get.status).toBe(200);
    expect(get.headers.get('x-request-id')).toBe('req-page-1');
    expect(get.headers.get('referrer-policy')).toBe('no-referrer');
    expect(get.headers.get('cache-control')).toBe('no-store');
    expect(get.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    const html = await get.text();

    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
    expect(await (await fetch(`${url}/?utm_source=mail`)).text()).toBe(html);
    expect(await (await fetch(`${h.base}/I/${l.token}`)).text()).toBe(html);
    // A percent-encoded token is the same token, as the router decoded it.
    const encoded = `${h.base}/i/${encodeURIComponent(l.token).replace(/^./, (c) => `%${c.charCodeAt(0).toString(16)}`)}`;
    expect((await fetch(encoded)).status).toBe(200);

    const post = await fetch(url, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('HEAD, GET');
    expect(await post.json()).toMatchObject({
      code: 'method_not_allowed',
      details: { method: 'POST', allowed: ['HEAD', 'GET'] },
    });
    // The conversation routes refuse unknown methods the same way (before, the body said not_found).
    const wrong = await fetch(`${url}/conversations`, { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect((await wrong.json()).code).toBe('method_not_allowed');
  });

  it('serves the page of a device whose knowledge cannot be indexed, and logs why', async () => {
    // Only a snapshot no schema checked can carry such knowledge; the page must not fail with it.
    const l = await h.link({ device: { knowledge: [null] as unknown as DeviceSnapshot['knowledge'] } });
    const res = await page(l.token);
    expect(res.status).toBe(200);
    expect(res.html).toContain('<form id="chat"');
    await waitFor(async () => h.logs.some((line) => line.msg === 'indexing device knowledge failed'));
    expect(h.logs.find((line) => line.msg === 'indexing device knowledge failed')).toMatchObject({
      level: 40,
      deviceId: l.device.id,
    });
  });

  it('answers a start with JSON, the request id and the link headers, as the router did', async () => {
    const l = await h.link();
    const url = `${h.base}/i/${l.token}/conversations`;
    const start = await fetch(url, { method: 'POST', headers: { 'x-request-id': 'req-start-1' } });
    expect(start.status).toBe(201);
    expect(start.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(start.headers.get('x-request-id')).toBe('req-start-1');
    expect(start.headers.get('cache-control')).toBe('no-store');
    expect(start.headers.get('referrer-policy')).toBe('no-referrer');
    const text = await start.text();
    expect(start.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text)).toEqual({ conversationId: expect.stringMatching(/^cnv_/) });
    // A body, a trailing slash, a query and /I/ in capitals change nothing.
    for (const other of [`${url}/?src=mail`, `${h.base}/I/${l.token}/conversations`]) {
      const res = await fetch(other, { method: 'POST', body: '{"ignored":true}' });
      expect(res.status).toBe(201);
    }
    expect(await conversationsOf(l.recipient.id)).toBe(3);
    // A refusal is the catalogue's JSON with the same headers.
    const unknown = await fetch(`${h.base}/i/Zz0000000000000000000000zz/conversations`, {
      method: 'POST',
      headers: { 'x-request-id': 'req-start-2' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-request-id')).toBe('req-start-2');
    expect(unknown.headers.get('cache-control')).toBe('no-store');
    expect(await unknown.json()).toMatchObject({ code: 'not_found', retryable: false });
    const get = await fetch(url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(await get.json()).toMatchObject({ code: 'method_not_allowed', details: { allowed: ['POST'] } });
    expect(await conversationsOf(l.recipient.id)).toBe(3);
  });
});

describe('the refusal table, on the page and on a start', () => {
  it('404 not_found for an unknown token', async () => {
    const p = await page('Zz0000000000000000000000zz');
    expect(p.status).toBe(404);
    expect(p.html).toContain('This link does not exist.');
    const r = await post(`${h.base}/i/Zz0000000000000000000000zz/conversations`);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
  });

  // A campaign not live yet may open, so retrying makes sense; a completed one never will, and its
  // page says so rather than to try again later.
  it.each([
    ['draft', { launchedAt: null }, true],
    ['upcoming', { startDate: new Date(Date.now() + 3600_000).toISOString() }, true],
    ['completed', { endDate: new Date(Date.now() - 1000).toISOString() }, false],
    ['halted', { haltedAt: new Date(Date.now() - 1000).toISOString() }, false],
  ])('503 unavailable for a %s campaign', async (_name, campaign, retryable) => {
    const l = await h.link({ campaign, waitLive: false });
    await waitFor(async () => (await page(l.token)).status === 503);
    // Until its snapshot arrives the campaign is unknown, which is retryable: wait for the snapshot.
    const start = () => post(`${h.base}/i/${l.token}/conversations`);
    if (!retryable)
      await waitFor(async () => (await start()).body.retryable === false).catch(() => undefined);
    const p = await page(l.token);
    expect(p.status).toBe(503);
    const r = await start();
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({
      code: 'unavailable',
      retryable,
      details: { reason: 'campaign_not_active' },
    });
    if (!retryable) expect(r.body.hint).toMatch(/will not help/);
    expect(noticeOf(p.html)).toEqual({
      code: 'unavailable',
      text: retryable
        ? 'This conversation is currently unavailable. Please try again later.'
        : 'This conversation is currently unavailable. If you still need help, please contact the sender of this link.',
    });
    expect(await conversationsOf(l.recipient.id)).toBe(0);
  });

  it('404 not_found for a link of a deleted campaign, once its tombstone arrives, before its recipient goes', async () => {
    const l = await h.link({
      campaign: { launchedAt: null, deletedAt: new Date().toISOString() },
      waitLive: false,
    });
    await waitFor(async () => (await page(l.token)).status === 404);
    const r = await post(`${h.base}/i/${l.token}/conversations`);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
  });

  it('503 unavailable for an inactive device', async () => {
    const l = await h.link({ device: { isActive: false }, waitLive: false });
    await waitFor(async () => (await page(l.token)).status === 503);
    // Until the campaign's snapshot has arrived the link is refused as campaign_not_active, also
    // 503: wait for the device's own reason rather than for the first 503.
    let reason: unknown;
    await waitFor(async () => {
      reason = (await post(`${h.base}/i/${l.token}/conversations`)).body.details.reason;
      return reason === 'device_inactive';
    }).catch(() => undefined);
    expect(reason).toBe('device_inactive');
    const p = await page(l.token);
    expect(p.status).toBe(503);
    expect(noticeOf(p.html)).toEqual({
      code: 'unavailable',
      text: 'This conversation is currently unavailable. Please try again later.',
    });
  });

  it('403 forbidden outside the allow-list, admitted inside it', async () => {
    const outside = await h.link({
      device: { ipAllowList: ['10.0.0.0/8', '2001:db8::/32'] },
      waitLive: false,
    });
    await waitFor(async () => (await page(outside.token)).status === 403);
    expect(noticeOf((await page(outside.token)).html)).toEqual({
      code: 'forbidden',
      text: 'This conversation is not available from your network.',
    });
    const r = await post(`${h.base}/i/${outside.token}/conversations`);
    expect(r.body.code).toBe('forbidden');
    const inside = await h.link({ device: { ipAllowList: ['127.0.0.0/8'] } });
    expect((await page(inside.token)).status).toBe(200);
    expect((await post(`${h.base}/i/${inside.token}/conversations`)).status).toBe(201);
  });

  it('403 link_disabled with the escaped disabledMessage, or a default in the device language', async () => {
    const l = await h.link({ recipient: { isActive: false, disabledMessage: 'Closed <b>for</b> now' } });
    const p = await page(l.token);
    expect(p.status).toBe(403);
    expect(p.html).toContain('Closed &#60;b&#62;for&#60;/b&#62; now');
    expect(p.html).not.toContain('<b>for</b>');
    const r = await post(`${h.base}/i/${l.token}/conversations`);
    expect(r.body).toMatchObject({ code: 'link_disabled', details: { message: 'Closed <b>for</b> now' } });
    // The default text says whom to ask, as the API's hint does.
    const plain = await h.link({ recipient: { isActive: false } });
    expect(noticeOf((await page(plain.token)).html)).toEqual({
      code: 'link_disabled',
      text: 'This link is no longer active. If you need help, please contact the sender of this link.',
    });
    const de = await page(plain.token, 'de-CH,de;q=0.9,en;q=0.5');
    expect(de.html).toContain(
      'Dieser Link ist nicht mehr aktiv. Wenn Sie Hilfe benötigen, wenden Sie sich bitte an den Absender dieses Links.',
    );
    expect(de.html).toContain('lang="de"');
    // The operator's own text is in the device language where the page's texts fell back to English.
    const ko = await h.link({
      device: { languages: ['ko'], defaultLanguage: 'ko' },
      recipient: { isActive: false, disabledMessage: '종료되었습니다' },
    });
    const koPage = await page(ko.token, 'ko');
    expect(koPage.html).toContain('<html lang="en">');
    expect(koPage.html).toMatch(
      /<p class="notice" role="alert" data-code="link_disabled" lang="ko" dir="auto">종료되었습니다<\/p>/,
    );
    const koDefault = await page(
      (await h.link({ device: { languages: ['ko'], defaultLanguage: 'ko' }, recipient: { isActive: false } }))
        .token,
      'ko',
    );
    expect(koDefault.html).toMatch(
      /<p class="notice" role="alert" data-code="link_disabled" dir="auto">This link/,
    );
  });

  it('shows an operator message stored with bidi controls without them, on the page and on a start', async () => {
    // Stored before they were refused: an RLO would show "gnp.exe" as "exe.png".
    const l = await h.link({
      recipient: { isActive: false, disabledMessage: 'Call 0100. \u202Egnp.exe \u2067x' },
    });
    expect(noticeOf((await page(l.token)).html)).toEqual({
      code: 'link_disabled',
      text: 'Call 0100. gnp.exe x',
    });
    const r = await post(`${h.base}/i/${l.token}/conversations`);
    expect(r.body.details.message).toBe('Call 0100. gnp.exe x');
    const c = await h.link({
      recipient: { maxInteractionsPerWindow: 1, windowSeconds: 600, cooldownMessage: '\u202DBack soon' },
    });
    expect((await post(`${h.base}/i/${c.token}/conversations`)).status).toBe(201);
    expect((await post(`${h.base}/i/${c.token}/conversations`)).body.details.message).toBe('Back soon');
  });

  it("gives the page's texts in the visitor's next accepted device language that ships, not English", async () => {
    const languages = { languages: ['en', 'de', 'fr', 'ja', 'ar'], defaultLanguage: 'en' };
    const chat = await page((await h.link({ device: languages })).token, 'ar,fr;q=0.5');
    expect(chat.status).toBe(200);
    expect(chat.html).toContain('<html lang="fr">');
    expect(chat.html).toContain('>Envoyer</button>');
    // The conversation itself stays in the device language the visitor prefers.
    expect(chat.html).toMatch(/id="cfg">\{"lang":"ar",/);
    const off = await h.link({ device: languages, recipient: { isActive: false } });
    expect(noticeOf((await page(off.token, 'ar,fr;q=0.5')).html)).toEqual({
      code: 'link_disabled',
      text: 'Ce lien n&#39;est plus actif. Si vous avez besoin d&#39;aide, veuillez contacter l&#39;expéditeur de ce lien.',
    });
  });

  it('403 link_disabled once interactionCount reaches maxTotalInteractions', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 2 } });
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
    const r = await post(`${h.base}/i/${l.token}/conversations`);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('link_disabled');
    expect((await page(l.token)).status).toBe(403);
    expect(await conversationsOf(l.recipient.id)).toBe(2);
  });

  it('429 cooldown with cooldownMessage, Retry-After and when to try again', async () => {
    const l = await h.link({
      recipient: { maxInteractionsPerWindow: 1, windowSeconds: 600, cooldownMessage: 'Back soon!' },
    });
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
    const r = await post(`${h.base}/i/${l.token}/conversations`);
    expect(r.status).toBe(429);
    expect(r.body).toMatchObject({ code: 'cooldown', retryable: true, details: { message: 'Back soon!' } });
    expect(Number(r.headers.get('retry-after'))).toBe(600);
    const p = await page(l.token);
    expect(p.status).toBe(429);
    expect(p.headers.get('retry-after')).toBe('600');
    // The operator's own message still gets the page's note of when a slot frees, in whole minutes.
    expect(noticeOf(p.html)).toEqual({ code: 'cooldown', text: 'Back soon!\nYou can try again in 10 min.' });
  });

  it('403 budget_exhausted with a neutral text that does not ask to try again later', async () => {
    const l = await h.link({ campaign: { includedConversations: 1 } });
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
    const r = await post(`${h.base}/i/${l.token}/conversations`);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'budget_exhausted', retryable: false });
    expect(r.body.hint).toBe(
      "The campaign's conversation budget is used up; the sender must raise it before new conversations can start.",
    );
    const p = await page(l.token);
    expect(p.status).toBe(403);
    // Nothing about budgets, and nothing that a later visit would change by itself.
    expect(noticeOf(p.html)).toEqual({
      code: 'budget_exhausted',
      text: 'This conversation is currently unavailable. If you still need help, please contact the sender of this link.',
    });
  });

  it('when several refusals apply, the one earliest in the table wins, on the page and on a start', async () => {
    // One start leaves the lifetime cap reached, the window full and the budget used up.
    const l = await h.link({
      recipient: { maxTotalInteractions: 1, maxInteractionsPerWindow: 1, windowSeconds: 600 },
      campaign: { includedConversations: 1 },
    });
    const start = () => post(`${h.base}/i/${l.token}/conversations`);
    expect((await start()).status).toBe(201);
    const refusedAs = async (status: number, code: string, reason?: string) => {
      await waitFor(async () => {
        const r = await start();
        return r.body.code === code && (reason === undefined || r.body.details.reason === reason);
      });
      expect((await start()).status).toBe(status);
      expect((await page(l.token)).status).toBe(status);
    };
    await refusedAs(403, 'link_disabled');
    // Then each earlier check is made to fail too, from the allow-list up to the campaign.
    const outside = await h.publisher.device({ ...l.device, ipAllowList: ['10.0.0.0/8'] });
    await refusedAs(403, 'forbidden');
    await h.publisher.device({ ...outside, isActive: false });
    await refusedAs(503, 'unavailable', 'device_inactive');
    await h.publisher.campaign({ ...l.campaign, haltedAt: new Date().toISOString() });
    await refusedAs(503, 'unavailable', 'campaign_not_active');
    expect(await conversationsOf(l.recipient.id)).toBe(1);

    // A full window comes before a used-up budget.
    const w = await h.link({
      recipient: { maxInteractionsPerWindow: 1, windowSeconds: 600 },
      campaign: { includedConversations: 1 },
    });
    expect((await post(`${h.base}/i/${w.token}/conversations`)).status).toBe(201);
    const r = await post(`${h.base}/i/${w.token}/conversations`);
    expect(r.status).toBe(429);
    expect(r.body.code).toBe('cooldown');
    expect((await page(w.token)).status).toBe(429);
  });

  it('a fixed-price campaign is uncapped even with included conversations set', async () => {
    const l = await h.link({ campaign: { budgetMode: 'fixed', includedConversations: 1 } });
    for (let i = 0; i < 3; i++) expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
  });
});

describe("a start repeated with the client's key", () => {
  const key = (n: number) => `start-key-${String(n).padStart(8, '0')}`;

  it('answers the conversation already started and consumes nothing more', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 2 } });
    const url = `${h.base}/i/${l.token}/conversations`;
    const first = await post(url, undefined, { 'idempotency-key': key(1) });
    const again = await post(url, undefined, { 'idempotency-key': key(1) });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body.conversationId).toBe(first.body.conversationId);
    expect(await conversationsOf(l.recipient.id)).toBe(1);
    // Another key is another start: the cap of 2 is not used up by the repeat.
    const other = await post(url, undefined, { 'idempotency-key': key(2) });
    expect(other.status).toBe(201);
    expect(other.body.conversationId).not.toBe(first.body.conversationId);
    expect((await post(url, undefined, { 'idempotency-key': key(3) })).body.code).toBe('link_disabled');
    expect(await conversationsOf(l.recipient.id)).toBe(2);
  });

  it('admits one conversation for parallel starts with one key, the others told to retry', async () => {
    const l = await h.link();
    const url = `${h.base}/i/${l.token}/conversations`;
    const all = await Promise.all(
      Array.from({ length: 20 }, () => post(url, undefined, { 'idempotency-key': key(4) })),
    );
    const ids = new Set(all.filter((r) => r.status === 201).map((r) => r.body.conversationId));
    expect(ids.size).toBe(1);
    for (const r of all.filter((x) => x.status !== 201)) {
      expect(r).toMatchObject({
        status: 503,
        body: { retryable: true, details: { reason: 'start_in_progress' } },
      });
    }
    expect(await conversationsOf(l.recipient.id)).toBe(1);
  });

  it('answers the same conversation after Redis lost its data, whichever start rebuilds the counters', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 3 } });
    const url = `${h.base}/i/${l.token}/conversations`;
    const first = await post(url, undefined, { 'idempotency-key': key(6) });
    const second = await post(url, undefined, { 'idempotency-key': key(7) });
    expect([first.status, second.status]).toEqual([201, 201]);

    // The retry of key 6 finds the counters missing and rebuilds them itself.
    await clearRedisPrefix(h.ns.redisPrefix);
    const retried = await post(url, undefined, { 'idempotency-key': key(6) });
    expect(retried).toMatchObject({ status: 201, body: { conversationId: first.body.conversationId } });

    // A start without a key rebuilds them first; the retry of key 7 after it is answered all the same.
    await clearRedisPrefix(h.ns.redisPrefix);
    expect((await post(url)).status).toBe(201);
    const retried7 = await post(url, undefined, { 'idempotency-key': key(7) });
    expect(retried7).toMatchObject({ status: 201, body: { conversationId: second.body.conversationId } });

    // Three conversations, the cap: the retries consumed nothing.
    expect(await conversationsOf(l.recipient.id)).toBe(3);
    expect((await post(url, undefined, { 'idempotency-key': key(8) })).body.code).toBe('link_disabled');
  });

  it('frees the key of a refused start, and refuses a malformed key', async () => {
    const l = await h.link({ recipient: { isActive: false } });
    const url = `${h.base}/i/${l.token}/conversations`;
    expect((await post(url, undefined, { 'idempotency-key': key(5) })).body.code).toBe('link_disabled');
    const redis = new Redis(h.ns.env.REDIS_URL);
    try {
      expect(await redis.keys(`${h.ns.redisPrefix}link:start:${l.recipient.id}:*`)).toEqual([]);
    } finally {
      await redis.quit();
    }
    const bad = await post(url, undefined, { 'idempotency-key': 'short' });
    expect(bad).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', details: { header: 'Idempotency-Key' } },
    });
  });

  // What a process killed while making a start leaves once its '-' has expired (a minute later):
  // the start key gone, its claim still beside it.
  const orphanClaim = async (recipientId: string, startKey: string) => {
    const redis = new Redis(h.ns.env.REDIS_URL);
    try {
      const at = `${h.ns.redisPrefix}link:start:${recipientId}:${startKey}`;
      await redis.multi().del(at).set(`${at}:claim`, 'dead-claim', 'EX', 500).exec();
    } finally {
      await redis.quit();
    }
  };

  it('answers the conversation a killed process wrote but never set the key of', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 2 } });
    const url = `${h.base}/i/${l.token}/conversations`;
    const first = await post(url, undefined, { 'idempotency-key': key(9) });
    expect(first.status).toBe(201);
    await orphanClaim(l.recipient.id, key(9));
    const retried = await post(url, undefined, { 'idempotency-key': key(9) });
    expect(retried).toMatchObject({ status: 201, body: { conversationId: first.body.conversationId } });
    expect(await conversationsOf(l.recipient.id)).toBe(1);
    // The key is set again, and the cap of 2 still has room for another start.
    const redis = new Redis(h.ns.env.REDIS_URL);
    try {
      const at = `${h.ns.redisPrefix}link:start:${l.recipient.id}:${key(9)}`;
      expect([await redis.get(at), await redis.exists(`${at}:claim`)]).toEqual([
        first.body.conversationId,
        0,
      ]);
    } finally {
      await redis.quit();
    }
    expect((await post(url, undefined, { 'idempotency-key': key(10) })).status).toBe(201);
    expect((await post(url, undefined, { 'idempotency-key': key(11) })).body.code).toBe('link_disabled');
  });

  it('makes the start of a process killed before writing it, once for parallel retries', async () => {
    const l = await h.link();
    const url = `${h.base}/i/${l.token}/conversations`;
    // The counters exist (a start without a key made them), as they did for the killed process.
    expect((await post(url)).status).toBe(201);
    await orphanClaim(l.recipient.id, key(12));
    const all = await Promise.all(
      Array.from({ length: 20 }, () => post(url, undefined, { 'idempotency-key': key(12) })),
    );
    const made = all.filter((r) => r.status === 201);
    expect(new Set(made.map((r) => r.body.conversationId)).size).toBe(1);
    for (const r of all.filter((x) => x.status !== 201))
      expect(r).toMatchObject({ status: 503, body: { details: { reason: 'start_in_progress' } } });
    expect(await conversationsOf(l.recipient.id)).toBe(2);
    const again = await post(url, undefined, { 'idempotency-key': key(12) });
    expect(again).toMatchObject({ status: 201, body: { conversationId: made[0].body.conversationId } });
  });
});

describe('what consumes', () => {
  it('a page view consumes nothing, a start one, messages none, a reload a new one', async () => {
    const l = await h.link();
    for (let i = 0; i < 5; i++) expect((await page(l.token)).status).toBe(200);
    expect(await conversationsOf(l.recipient.id)).toBe(0);

    const first = await post(`${h.base}/i/${l.token}/conversations`);
    expect(first.status).toBe(201);
    expect(first.body.conversationId).toMatch(/^cnv_/);
    expect(await conversationsOf(l.recipient.id)).toBe(1);

    for (let i = 0; i < 3; i++) {
      const m = await post(`${h.base}/i/${l.token}/conversations/${first.body.conversationId}/messages`, {
        text: `hello ${i}`,
      });
      expect(m.status).toBe(200);
      expect(m.body.reply).toContain('No language model is configured');
    }
    expect(await conversationsOf(l.recipient.id)).toBe(1);

    const reload = await post(`${h.base}/i/${l.token}/conversations`);
    expect(reload.body.conversationId).not.toBe(first.body.conversationId);
    expect(await conversationsOf(l.recipient.id)).toBe(2);
  });

  it('announces the conversations of one durable write in one event by recipient, the batch id its message id', async () => {
    // A cap it never reaches, so that a page view resolves the link and seeds its counters first:
    // the starts then only run the admission script, together, and reach the 50 ms group commit
    // together, however loaded the machine.
    const l = await h.link({ recipient: { maxTotalInteractions: 1000 } });
    expect((await page(l.token)).status).toBe(200);
    const before = Date.now();
    const started = await Promise.all([1, 2, 3].map(() => post(`${h.base}/i/${l.token}/conversations`)));
    expect(started.map((r) => r.status)).toEqual([201, 201, 201]);
    const js = h.publisher.connection.jetstream();
    const consumer = await js.consumers.get(streamNames(h.ns.natsPrefix).events, {
      filterSubjects: subjects(h.ns.natsPrefix).usageStarts,
    });
    const events: { msgId: string | undefined; event: UsageStarts }[] = [];
    const mine = () =>
      events.filter((e) =>
        e.event.batches.some((b) => b.recipients.some((r) => r.recipientId === l.recipient.id)),
      );
    await waitFor(async () => {
      const msg = await consumer.next({ expires: 1000 });
      if (msg)
        events.push({
          msgId: msg.headers?.get('Nats-Msg-Id'),
          event: JSONCodec<UsageStarts>().decode(msg.data),
        });
      return mine().length > 0;
    }, 5000);
    expect(mine()).toHaveLength(1);
    const [{ msgId, event }] = mine();
    // One write, so one batch, announced alone under its own id.
    expect(event.batches).toHaveLength(1);
    expect(msgId).toBe(event.eventId);
    expect(event.eventId).toBe(event.batches[0].batchId);
    expect(event.eventId).toMatch(/^usb_/);
    expect(event.batches[0].recipients).toEqual([
      {
        recipientId: l.recipient.id,
        campaignId: l.campaign.id,
        projectId: l.campaign.projectId,
        startedAtMs: [expect.any(Number), expect.any(Number), expect.any(Number)],
      },
    ]);
    for (const ms of event.batches[0].recipients[0].startedAtMs) {
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(Date.now());
    }
    // The same instants as the durable record's.
    const { rows } = await db.query<{ ms: string }>(
      'SELECT (extract(epoch FROM started_at) * 1000)::bigint AS ms FROM link.conversations WHERE recipient_id = $1 ORDER BY started_at',
      [l.recipient.id],
    );
    expect(rows.map((r) => Number(r.ms))).toEqual([...event.batches[0].recipients[0].startedAtMs].sort());
    // Nothing on the subjects that consumers of older versions read.
    for (const older of [
      subjects(h.ns.natsPrefix).usageAdmitted,
      subjects(h.ns.natsPrefix).usageAdmittedBatch,
    ]) {
      const c = await js.consumers.get(streamNames(h.ns.natsPrefix).events, { filterSubjects: older });
      expect(await c.next({ expires: 1000 })).toBeNull();
    }
    // Confirmed, so the outbox marks it (and keeps it for a replay).
    await waitFor(() => confirmed(event.eventId));
  });

  it('refuses a start whose durable write is stuck as unavailable, writes nothing and takes it back', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 1 } });
    const url = `${h.base}/i/${l.token}/conversations`;
    const failures = () =>
      h.logs.filter((line) => line.level === 50 && line.msg === 'conversation start failed');
    // A refusal by the link's rules (here: a halted campaign) is no failure and is not logged.
    const halted = await h.link({
      campaign: { haltedAt: new Date(Date.now() - 1000).toISOString() },
      waitLive: false,
    });
    await waitFor(async () => (await post(`${h.base}/i/${halted.token}/conversations`)).status === 503);
    expect(failures()).toHaveLength(0);
    const blocker = new Client({ connectionString: h.ns.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE link.usage_batches IN ACCESS EXCLUSIVE MODE');
      const stuck = await post(url);
      expect(stuck.status).toBe(503);
      expect(stuck.body).toMatchObject({ code: 'unavailable', retryable: true });
      expect(failures()).toHaveLength(1);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // PostgreSQL cancelled the statement, so it cannot commit once the lock is gone.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await conversationsOf(l.recipient.id)).toBe(0);
    // Taken back from the counters: the link's one interaction is still there, and a write
    // stuck a moment ago does not hold the next one.
    expect((await post(url)).status).toBe(201);
    expect((await post(url)).body.code).toBe('link_disabled');
    expect(await conversationsOf(l.recipient.id)).toBe(1);
    // The metrics tell the outage from the halted campaign, though both answered 503.
    const metrics = await (await fetch(`http://127.0.0.1:${h.service.ports.metrics}/metrics`)).text();
    expect(metrics).toMatch(
      /link_refusals_total\{code="unavailable",kind="failure",service="link-runtime"\} 1\n/,
    );
    expect(metrics).toMatch(
      /link_refusals_total\{code="unavailable",kind="rule",service="link-runtime"\} [1-9]/,
    );
  });

  it('republishes a batch an older version wrote and never saw confirmed on its own subject, unchanged', async () => {
    const batchId = `usb_crashed_${Date.now()}`;
    const event: UsageAdmittedBatch = {
      batchId,
      conversations: [
        {
          conversationId: `cnv_crashed_${Date.now()}`,
          recipientId: 'rcp_crashed',
          campaignId: 'cmp_crashed',
          projectId: 'prj_crashed',
          startedAt: new Date().toISOString(),
        },
      ],
    };
    await db.query('INSERT INTO link.usage_batches (id, event, created_at) VALUES ($1, $2, $3)', [
      batchId,
      JSON.stringify(event),
      new Date(Date.now() - 60_000),
    ]);
    const js = h.publisher.connection.jetstream();
    const consumer = await js.consumers.get(streamNames(h.ns.natsPrefix).events, {
      filterSubjects: subjects(h.ns.natsPrefix).usageAdmittedBatch,
    });
    let republished: UsageAdmittedBatch | undefined;
    await waitFor(async () => {
      const msg = await consumer.next({ expires: 1000 });
      const batch = msg && JSONCodec<UsageAdmittedBatch>().decode(msg.data);
      if (batch?.batchId === batchId) republished = batch;
      return republished !== undefined;
    }, 5000);
    expect(republished).toEqual(event);
    // Never in this version's form too, which consumers would apply once more by its batch id.
    const starts = await js.consumers.get(streamNames(h.ns.natsPrefix).events, {
      filterSubjects: subjects(h.ns.natsPrefix).usageStarts,
    });
    for (let msg = await starts.next({ expires: 1000 }); msg; msg = await starts.next({ expires: 1000 }))
      expect(JSONCodec<UsageStarts>().decode(msg.data).eventId).not.toBe(batchId);
    await waitFor(() => confirmed(batchId));
  });

  it('republishes a written batch whose event was never confirmed (a crash between the two) alone, under its id', async () => {
    const batch: UsageStartsBatch = {
      batchId: `usb_crashed_${Date.now()}`,
      recipients: [
        {
          recipientId: 'rcp_crashed',
          campaignId: 'cmp_crashed',
          projectId: 'prj_crashed',
          startedAtMs: [Date.now()],
        },
      ],
    };
    await db.query('INSERT INTO link.usage_batches (id, event, created_at) VALUES ($1, $2, $3)', [
      batch.batchId,
      JSON.stringify(batch),
      new Date(Date.now() - 60_000),
    ]);
    const js = h.publisher.connection.jetstream();
    const consumer = await js.consumers.get(streamNames(h.ns.natsPrefix).events, {
      filterSubjects: subjects(h.ns.natsPrefix).usageStarts,
    });
    let republished: { msgId: string | undefined; event: UsageStarts } | undefined;
    await waitFor(async () => {
      const msg = await consumer.next({ expires: 1000 });
      const event = msg && JSONCodec<UsageStarts>().decode(msg.data);
      if (event?.eventId === batch.batchId) republished = { msgId: msg?.headers?.get('Nats-Msg-Id'), event };
      return republished !== undefined;
    }, 5000);
    expect(republished).toEqual({
      msgId: batch.batchId,
      event: { eventId: batch.batchId, batches: [batch] },
    });
    await waitFor(() => confirmed(batch.batchId));
  });

  it('announces what the previous version wrote but never announced, each under its own id', async () => {
    const id = `cnv_legacy_${Date.now()}`;
    const startedAt = new Date(Date.now() - 60_000);
    // As the previous version wrote it: no batch, published_at unset.
    await db.query(
      `INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at)
       VALUES ($1, 'rcp_legacy', 'cmp_legacy', 'prj_legacy', $2)`,
      [id, startedAt],
    );
    const js = h.publisher.connection.jetstream();
    const consumer = await js.consumers.get(streamNames(h.ns.natsPrefix).events, {
      filterSubjects: subjects(h.ns.natsPrefix).usageAdmittedBatch,
    });
    let announced: { msgId: string | undefined; batch: UsageAdmittedBatch } | undefined;
    await waitFor(async () => {
      const msg = await consumer.next({ expires: 1000 });
      const batch = msg && JSONCodec<UsageAdmittedBatch>().decode(msg.data);
      if (batch?.batchId === id) announced = { msgId: msg?.headers?.get('Nats-Msg-Id'), batch };
      return announced !== undefined;
    }, 5000);
    expect(announced).toEqual({
      msgId: id,
      batch: {
        batchId: id,
        conversations: [
          {
            conversationId: id,
            recipientId: 'rcp_legacy',
            campaignId: 'cmp_legacy',
            projectId: 'prj_legacy',
            startedAt: startedAt.toISOString(),
          },
        ],
      },
    });
    await waitFor(async () => {
      const { rows } = await db.query('SELECT published_at FROM link.conversations WHERE id = $1', [id]);
      return rows[0].published_at !== null;
    });
  });
});

describe('messages', () => {
  it('bounds size and rate with clear JSON errors, and refuses unknown conversations', async () => {
    const l = await h.link();
    // The rate is counted per clock minute: held in the middle of one, no minute ends mid-test.
    h.clock.fixed = (Math.floor(Date.now() / 60_000) + 1) * 60_000 + 30_000;
    try {
      const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
      const url = `${h.base}/i/${l.token}/conversations/${c}/messages`;
      const long = await post(url, { text: 'x'.repeat(4001) });
      expect(long.status).toBe(400);
      expect(long.body).toMatchObject({
        code: 'invalid_request',
        details: { pointer: '/text', reason: 'too_long' },
      });
      expect((await post(url, { text: '' })).body.code).toBe('invalid_request');
      expect((await post(url, { text: 'hi', extra: 1 })).body.details.pointer).toBe('/extra');
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await post(url, { text: `m${i}` })).status);
      // Five a minute: refused bodies took no slot, the sixth and seventh valid messages are limited.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      const limited = await post(url, { text: 'again' });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      const other = await h.link();
      const foreign = await post(`${h.base}/i/${other.token}/conversations/${c}/messages`, { text: 'hi' });
      expect(foreign.status).toBe(404);
    } finally {
      h.clock.fixed = null;
    }
  });

  it("checks a message's link before its body, as a start's", async () => {
    const malformed = (token: string) =>
      fetch(`${h.base}/i/${token}/conversations/cnv_whatever/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"text": ',
      });
    const unknown = await malformed('Zz0000000000000000000000zz');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('not_found');
    const l = await h.link();
    const known = await malformed(l.token);
    expect(known.status).toBe(400);
    expect(((await known.json()) as { code: string }).code).toBe('invalid_request');
  });

  it('goes on with a conversation Redis lost, from the durable record, within the TTL of its start', async () => {
    const l = await h.link();
    const other = await h.link();
    const started = Date.now();
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    const url = `${h.base}/i/${l.token}/conversations/${c}/messages`;
    expect((await post(url, { text: 'hello' })).status).toBe(200);
    const redis = new Redis(h.ns.env.REDIS_URL);
    const key = `${h.ns.redisPrefix}link:conv:${c}`;
    try {
      // What a loss of Redis's data does to this conversation.
      await redis.del(key);
      const foreign = await post(`${h.base}/i/${other.token}/conversations/${c}/messages`, { text: 'hi' });
      expect(foreign.status).toBe(404);
      expect((await post(url, { text: 'still there?' })).status).toBe(200);
      expect(await redis.hget(key, 'recipientId')).toBe(l.recipient.id);
      expect(await redis.ttl(key)).toBeGreaterThan(86_000);
      // A day after its start it has been idle longer than the TTL, however it was kept.
      await redis.del(key);
      h.clock.fixed = started + 86_400_000 + 1000;
      const late = await post(url, { text: 'a day later' });
      expect(late.status).toBe(404);
      expect(late.body.code).toBe('not_found');
      // Told apart from an unknown link, so the page can say the conversation ended.
      expect(late.body.details).toEqual({ reason: 'conversation_not_found' });
    } finally {
      h.clock.fixed = null;
      await redis.quit();
    }
  });

  it('streams tokens as server-sent events when asked', async () => {
    const l = await h.link();
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    const res = await fetch(`${h.base}/i/${l.token}/conversations/${c}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ text: 'stream please' }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const tokens = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]));
    const done = tokens.at(-1);
    expect(text).toContain('event: done');
    expect(
      tokens
        .slice(0, -1)
        .map((t) => t.token)
        .join(''),
    ).toBe(done.reply);
  });
});

describe('with CONVERSATION_RECORD_AT_START off', () => {
  let lazy: Harness;
  beforeAll(async () => {
    lazy = await startHarness({ CONVERSATION_RECORD_AT_START: 'false' });
  });
  afterAll(() => lazy?.close());

  it('a start writes no Redis record; the first message reads it from PostgreSQL and keeps it', async () => {
    const l = await lazy.link();
    const redis = new Redis(lazy.ns.env.REDIS_URL);
    try {
      const start = await post(`${lazy.base}/i/${l.token}/conversations`);
      expect(start.status).toBe(201);
      const key = `${lazy.ns.redisPrefix}link:conv:${start.body.conversationId}`;
      expect(await redis.exists(key)).toBe(0);
      const url = `${lazy.base}/i/${l.token}/conversations/${start.body.conversationId}/messages`;
      expect((await post(url, { text: 'hello' })).status).toBe(200);
      expect(await redis.hget(key, 'recipientId')).toBe(l.recipient.id);
      const second = await post(url, { text: 'and again' });
      expect(second.status).toBe(200);
      expect(second.body.reply).toEqual(expect.any(String));
    } finally {
      await redis.quit();
    }
  });
});

describe('the rolling window is exact', () => {
  it('admits iff fewer than the cap lie in (now - window, now], Retry-After to the second', async () => {
    const l = await h.link({ recipient: { maxInteractionsPerWindow: 2, windowSeconds: 60 } });
    const t0 = Date.now();
    const at = async (offsetMs: number) => {
      h.clock.fixed = t0 + offsetMs;
      return post(`${h.base}/i/${l.token}/conversations`);
    };
    try {
      expect((await at(0)).status).toBe(201);
      expect((await at(10_000)).status).toBe(201);
      let r = await at(20_000);
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('40');
      r = await at(59_500);
      expect(r.headers.get('retry-after')).toBe('1');
      r = await at(59_999);
      expect(r.status).toBe(429);
      expect((await at(60_000)).status).toBe(201); // the first start left the window at t0 + 60 s
      r = await at(60_001);
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('10');
      expect((await at(70_000)).status).toBe(201);
    } finally {
      h.clock.fixed = null;
    }
  });
});

describe('no burst exceeds a cap', () => {
  it('250 parallel starts against a lifetime cap of 37 admit exactly 37', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 37 } });
    const results = await Promise.all(
      Array.from({ length: 250 }, () => post(`${h.base}/i/${l.token}/conversations`)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(37);
    expect(results.filter((r) => r.status === 403 && r.body.code === 'link_disabled')).toHaveLength(213);
    expect(await conversationsOf(l.recipient.id)).toBe(37);
  });

  it('250 parallel starts over five links against a budget of 41 admit exactly 41', async () => {
    const first = await h.link({ campaign: { includedConversations: 41 } });
    const tokens = [first.token];
    for (let i = 0; i < 4; i++) {
      const extra = recipient(first.campaign);
      h.recipients.recipients.set(extra.token, extra.recipient);
      tokens.push(extra.token);
    }
    const results = await Promise.all(
      Array.from({ length: 250 }, (_, i) => post(`${h.base}/i/${tokens[i % 5]}/conversations`)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(41);
    expect(results.filter((r) => r.body.code === 'budget_exhausted')).toHaveLength(209);
    const { rows } = await db.query('SELECT count(*) AS n FROM link.conversations WHERE campaign_id = $1', [
      first.campaign.id,
    ]);
    expect(Number(rows[0].n)).toBe(41);
  });
});

describe('starts arriving together', () => {
  it('are judged together: 100 starts sent at once take far fewer script runs than starts', async () => {
    const l = await h.link();
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201); // counters seeded
    // MONITOR sees every command Redis runs. With the counters seeded, the only scripts that name
    // the recipient's counter are admissions, one key per start they judge.
    const runs: number[] = [];
    const counter = `${h.ns.redisPrefix}link:rcp:${l.recipient.id}`;
    const monitor = await monitorRedis(h.ns.env.REDIS_URL, (args) => {
      const starts = args.filter((a) => a === counter).length;
      if (/^eval(sha)?$/i.test(args[0]) && starts > 0) runs.push(starts);
    });
    try {
      // Connected first, then all written in one go: the requests reach the server together.
      const { port } = new URL(h.base);
      const sockets = await Promise.all(
        Array.from(
          { length: 100 },
          () =>
            new Promise<Socket>((resolve, reject) => {
              const socket = connect(Number(port), '127.0.0.1', () => resolve(socket)).once('error', reject);
            }),
        ),
      );
      const answers = sockets.map(
        (socket) =>
          new Promise<string>((resolve) => {
            let text = '';
            socket.setEncoding('utf8').on('data', (chunk: string) => {
              text += chunk;
            });
            socket.once('close', () => resolve(text));
          }),
      );
      // The server accepts the connections on its own turns; give it time to take all of them.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const request = `POST /i/${l.token}/conversations HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
      for (const socket of sockets) socket.write(request);
      const statuses = (await Promise.all(answers)).map((text) => text.slice(9, 12));
      expect(statuses.filter((s) => s === '201')).toHaveLength(100);
      await waitFor(() => runs.reduce((n, k) => n + k, 0) === 100);
    } finally {
      monitor.stop();
    }
    // One start per run would be 100 runs; the starts a read of the sockets brings share one.
    expect(runs.length).toBeLessThanOrEqual(25);
  });
});

describe('Redis is a cache of the durable record', () => {
  it('a flush refunds no lifetime cap, window slot or budget', async () => {
    const capped = await h.link({
      recipient: { maxTotalInteractions: 2 },
      campaign: { includedConversations: 3 },
    });
    const windowed = await h.link({ recipient: { maxInteractionsPerWindow: 1, windowSeconds: 3600 } });
    const budgeted = { ...capped.recipient, id: `${capped.recipient.id}b`, maxTotalInteractions: undefined };
    const budgetToken = `${capped.token.slice(0, 20)}bbbbbb`;
    h.recipients.recipients.set(budgetToken, budgeted);
    expect((await post(`${h.base}/i/${capped.token}/conversations`)).status).toBe(201);
    expect((await post(`${h.base}/i/${capped.token}/conversations`)).status).toBe(201);
    expect((await post(`${h.base}/i/${budgetToken}/conversations`)).status).toBe(201);
    expect((await post(`${h.base}/i/${windowed.token}/conversations`)).status).toBe(201);

    await clearRedisPrefix(h.ns.redisPrefix);
    const redis = new Redis(h.ns.env.REDIS_URL);
    expect(await redis.keys(`${h.ns.redisPrefix}*`)).toEqual([]);
    await redis.quit();

    expect((await post(`${h.base}/i/${capped.token}/conversations`)).body.code).toBe('link_disabled');
    expect((await post(`${h.base}/i/${budgetToken}/conversations`)).body.code).toBe('budget_exhausted');
    const w = await post(`${h.base}/i/${windowed.token}/conversations`);
    expect(w.body.code).toBe('cooldown');
    expect(Number(w.headers.get('retry-after'))).toBeGreaterThan(3590);
  });
});

describe('a flush while a start is being written', () => {
  const insertsWaiting = () => lockWaiters(db, '%INSERT INTO link.conversations%');

  it('the rebuild waits for the write, so the lifetime cap still holds', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 2 } });
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
    // SHARE mode holds every conversation INSERT but not the rebuild's SELECTs.
    const blocker = new Client({ connectionString: h.ns.databaseUrl });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE link.conversations IN SHARE MODE');
    const first = post(`${h.base}/i/${l.token}/conversations`);
    await waitFor(async () => (await insertsWaiting()) === 1);
    await clearRedisPrefix(h.ns.redisPrefix);
    // Counted in Redis, not yet in PostgreSQL: a rebuild now must not miss it.
    const second = post(`${h.base}/i/${l.token}/conversations`);
    await new Promise((r) => setTimeout(r, 300));
    await blocker.query('COMMIT');
    await blocker.end();
    expect((await first).status).toBe(201);
    expect((await second).body.code).toBe('link_disabled');
    expect(await conversationsOf(l.recipient.id)).toBe(2);
  });

  it("another replica's write landing just after the loss is still counted by the rebuild", async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 2 } });
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
    // Another replica counted a start in Redis and is still writing it when Redis loses its data
    // (what it counted is gone with the flush; only its write matters now).
    await clearRedisPrefix(h.ns.redisPrefix);
    const next = post(`${h.base}/i/${l.token}/conversations`);
    await new Promise((r) => setTimeout(r, 100));
    await db.query(
      `INSERT INTO link.conversations (id, recipient_id, campaign_id, project_id, started_at)
       VALUES ($1, $2, $3, $4, now())`,
      ['cnv_other_replica', l.recipient.id, l.recipient.campaignId, l.recipient.projectId],
    );
    expect((await next).body.code).toBe('link_disabled');
    expect(await conversationsOf(l.recipient.id)).toBe(2);
  });
});

describe('a delete while a start is being written', () => {
  // Its own runtime: the start's INSERT waits on a lock across a NATS delivery, longer than the
  // short statement timeout of the one above allows on a loaded machine.
  let slow: Harness;
  beforeAll(async () => {
    slow = await startHarness({ DB_STATEMENT_TIMEOUT_MS: '20000' });
  });
  afterAll(() => slow?.close());

  it('a delete erases a start still being written when it arrived, once it is written', async () => {
    const l = await slow.link();
    const conv = (c: string) => `${slow.ns.redisPrefix}link:conv:${c}`;
    const earlier = (await post(`${slow.base}/i/${l.token}/conversations`)).body.conversationId as string;
    const redis = new Redis(slow.ns.env.REDIS_URL);
    // SHARE mode holds the start's INSERT but not the eraser's lookup.
    const blocker = new Client({ connectionString: slow.ns.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE link.conversations IN SHARE MODE');
      const late = post(`${slow.base}/i/${l.token}/conversations`);
      await waitFor(async () => (await lockWaiters(blocker, '%INSERT INTO link.conversations%')) === 1);
      slow.recipients.recipients.delete(l.token);
      await slow.publisher.recipientChanged(l.recipient, 'deleted');
      // The lookup has run once the conversation written before is erased; it missed the late one.
      await waitFor(async () => (await redis.hget(conv(earlier), 'id')) === null, 5000);
      await blocker.query('COMMIT');
      const started = await late;
      expect(started.status).toBe(201);
      const id = started.body.conversationId as string;
      await waitFor(async () => (await redis.hget(conv(id), 'erased')) === '1', 5000);
      expect(await redis.hget(conv(id), 'recipientId')).toBeNull();
    } finally {
      await blocker.end();
      redis.disconnect();
    }
  });
});

describe('changes take effect within a second', () => {
  it('budget exhaustion stops new starts only; a top-off re-admits; a halt ends the conversation', async () => {
    const l = await h.link({ campaign: { includedConversations: 1 } });
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    expect((await post(`${h.base}/i/${l.token}/conversations`)).body.code).toBe('budget_exhausted');
    expect(
      (await post(`${h.base}/i/${l.token}/conversations/${c}/messages`, { text: 'still here?' })).status,
    ).toBe(200);

    await h.publisher.campaign({ ...l.campaign, includedConversations: 2 });
    // Throws unless a check sent within the second sees the link admitted again.
    await waitFor(async () => (await page(l.token)).status === 200, 1000);
    expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);

    await h.publisher.campaign({
      ...l.campaign,
      includedConversations: 2,
      haltedAt: new Date().toISOString(),
    });
    await waitFor(
      async () =>
        (await post(`${h.base}/i/${l.token}/conversations/${c}/messages`, { text: 'hello?' })).status === 503,
      1000,
    );
  });

  it('a disable and a delete end a conversation in progress', async () => {
    const l = await h.link({ recipient: { disabledMessage: 'Paused by the sender.' } });
    const c = (await post(`${h.base}/i/${l.token}/conversations`)).body.conversationId;
    const url = `${h.base}/i/${l.token}/conversations/${c}/messages`;
    expect((await post(url, { text: 'one' })).status).toBe(200);

    h.recipients.recipients.set(l.token, {
      ...l.recipient,
      isActive: false,
      disabledMessage: 'Paused by the sender.',
    });
    await h.publisher.recipientChanged(l.recipient, 'updated');
    await waitFor(async () => (await post(url, { text: 'two' })).status === 403, 1000);
    const r = await post(url, { text: 'three' });
    expect(r.body).toMatchObject({ code: 'link_disabled', details: { message: 'Paused by the sender.' } });

    h.recipients.recipients.delete(l.token);
    await h.publisher.recipientChanged(l.recipient, 'deleted');
    await waitFor(async () => (await post(url, { text: 'four' })).status === 404, 1000);
  });

  it("a delete erases the recipient's conversations from Redis, history and all, and leaves others", async () => {
    const l = await h.link();
    const other = await h.link();
    const start = async (token: string) => {
      const c = (await post(`${h.base}/i/${token}/conversations`)).body.conversationId as string;
      expect(
        (await post(`${h.base}/i/${token}/conversations/${c}/messages`, { text: 'my account' })).status,
      ).toBe(200);
      return c;
    };
    const mine = [await start(l.token), await start(l.token)];
    const theirs = await start(other.token);
    const redis = new Redis(h.ns.env.REDIS_URL);
    const keysOf = (c: string) => [
      `${h.ns.redisPrefix}link:conv:${c}`,
      `${h.ns.redisPrefix}link:conv:${c}:history`,
    ];
    try {
      expect(await redis.exists(...mine.flatMap(keysOf))).toBe(4);
      h.recipients.recipients.delete(l.token);
      await h.publisher.recipientChanged(l.recipient, 'deleted');
      // The histories go; each record is left as a mark without its fields.
      const erased = async (c: string) =>
        (await redis.exists(`${h.ns.redisPrefix}link:conv:${c}:history`)) === 0 &&
        (await redis.hget(`${h.ns.redisPrefix}link:conv:${c}`, 'id')) === null;
      await waitFor(async () => (await erased(mine[0])) && erased(mine[1]), 1000);
      expect(await redis.exists(...keysOf(theirs))).toBe(2);
      expect(await redis.lrange(`${h.ns.redisPrefix}link:conv:${theirs}:history`, 0, -1)).toHaveLength(2);
      // Its conversations are over, and none is revived with its history.
      const after = await post(`${h.base}/i/${l.token}/conversations/${mine[0]}/messages`, {
        text: 'hello?',
      });
      expect(after.status).toBe(404);
      expect(await redis.exists(`${h.ns.redisPrefix}link:conv:${mine[0]}:history`)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('a device change (deactivation) takes effect within a second', async () => {
    const l = await h.link();
    await h.publisher.device({ ...l.device, isActive: false });
    await waitFor(async () => (await page(l.token)).status === 503, 1000);
  });
});
