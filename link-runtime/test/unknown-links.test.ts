import { type Harness, post, startHarness } from './support/harness';

// Made-up tokens by client address, counted in the real Redis: past the limit an address is
// refused before another ResolveLink call, for a clock minute; tokens that exist never count.
let h: Harness;
const MINUTE = Date.parse('2026-11-26T10:00:00.000Z');

beforeAll(async () => {
  h = await startHarness({ TRUST_PROXY: 'true', UNKNOWN_LINKS_PER_MINUTE: '3' });
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
