import { type Harness, post, startHarness } from './support/harness';

// Lookups of what exists nowhere, counted in the real Redis: made-up tokens by client address
// (past the limit refused before another ResolveLink call, for a clock minute) and made-up
// conversation ids by link (refused before another database lookup); what exists never counts.
let h: Harness;
// A clock minute of today: the fixtures' campaigns run from a day ago, so a fixed date would leave
// them behind it once that day has passed.
const MINUTE = Math.floor(Date.now() / 60_000) * 60_000;

beforeAll(async () => {
  h = await startHarness({
    TRUST_PROXY: 'true',
    UNKNOWN_LINKS_PER_MINUTE: '3',
    UNKNOWN_CONVERSATIONS_PER_MINUTE: '2',
  });
});

afterAll(async () => {
  await h.close();
});

const from = (address: string) => ({ 'x-forwarded-for': address });
const page = (token: string, address: string) => fetch(`${h.base}/i/${token}`, { headers: from(address) });
const madeUp = (i: number) => `MadeUp${i}${'x'.repeat(20)}`;

it('refuses an address that tried too many made-up tokens, before looking another one up', async () => {
  const live = await h.link();
  h.clock.fixed = MINUTE + 15_000;
  try {
    expect((await page(live.token, '203.0.113.7')).status).toBe(200);
    const before = h.recipients.calls;
    for (let i = 0; i < 3; i++) expect((await page(madeUp(i), '203.0.113.7')).status).toBe(404);
    expect(h.recipients.calls).toBe(before + 3);

    const refused = await page(madeUp(3), '203.0.113.7');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('45');
    const start = await post(`${h.base}/i/${madeUp(4)}/conversations`, undefined, from('203.0.113.7'));
    expect(start.status).toBe(429);
    expect(start.body).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      details: { reason: 'unknown_links', limitPerMinute: 3, retryAfterSeconds: 45 },
    });
    expect(h.recipients.calls).toBe(before + 3);

    // A link this process already knows still opens from there, and other addresses are untouched.
    expect((await page(live.token, '203.0.113.7')).status).toBe(200);
    expect((await page(madeUp(5), '198.51.100.9')).status).toBe(404);

    // The next minute, the address may look links up again.
    h.clock.fixed = MINUTE + 60_000;
    expect((await page(madeUp(6), '203.0.113.7')).status).toBe(404);
  } finally {
    h.clock.fixed = null;
  }
});

it('never counts tokens that exist', async () => {
  const links = await Promise.all([1, 2, 3, 4, 5].map(() => h.link({ waitLive: false })));
  const before = h.recipients.calls;
  for (const l of links) expect((await page(l.token, '192.0.2.44')).status).not.toBe(429);
  expect(h.recipients.calls).toBeGreaterThanOrEqual(before + 5);
  expect((await page(madeUp(7), '192.0.2.44')).status).toBe(404);
});

it('refuses a link that asked for too many made-up conversations, while its real ones go on', async () => {
  const live = await h.link();
  const other = await h.link();
  const message = (token: string, conversationId: string) =>
    post(`${h.base}/i/${token}/conversations/${conversationId}/messages`, { text: 'hello' });
  h.clock.fixed = MINUTE + 15_000;
  try {
    const started = await post(`${h.base}/i/${live.token}/conversations`);
    expect(started.status).toBe(201);
    const { conversationId } = started.body as { conversationId: string };
    expect((await message(live.token, 'cnv_madeup00000000000001')).status).toBe(404);
    expect((await message(live.token, 'cnv_madeup00000000000002')).status).toBe(404);

    const refused = await message(live.token, 'cnv_madeup00000000000003');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('45');
    expect(refused.body).toMatchObject({
      code: 'rate_limited',
      details: { reason: 'unknown_conversations', limitPerMinute: 2, retryAfterSeconds: 45 },
    });
    // The real conversation, held in Redis, is answered; another link is untouched.
    expect((await message(live.token, conversationId)).status).toBe(200);
    expect((await message(other.token, 'cnv_madeup00000000000004')).status).toBe(404);

    h.clock.fixed = MINUTE + 60_000;
    expect((await message(live.token, 'cnv_madeup00000000000005')).status).toBe(404);
  } finally {
    h.clock.fixed = null;
  }
});
