import { type Harness, post, startHarness } from './support/harness';

// A start from another site's page (a plain HTML form, say) is refused before anything is looked
// up or counted; the link's own page, and clients that are no browser, start as before.
let h: Harness;
const PUBLIC = 'https://links.example.test';

beforeAll(async () => {
  h = await startHarness({ PUBLIC_BASE_URL: `${PUBLIC}/` });
});

afterAll(async () => {
  await h?.close();
});

const start = (token: string, headers: Record<string, string>, body?: string) =>
  fetch(`${h.base}/i/${token}/conversations`, { method: 'POST', headers, body }).then(async (res) => ({
    status: res.status,
    body: await res.json(),
  }));

it('refuses a start another site sent, 403 cross_site, consuming nothing', async () => {
  // One interaction in all: any start that consumed it would leave the link disabled.
  const l = await h.link({ recipient: { maxTotalInteractions: 1 } });
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const refusals = [
    await start(l.token, { ...form, origin: 'https://evil.example' }, 'a=b'),
    await start(l.token, { ...form, origin: 'null' }, 'a=b'),
    await start(l.token, { origin: `${PUBLIC}.evil.example` }),
    await start(l.token, { origin: `http://evil.example/${h.base.slice('http://'.length)}` }),
    await start(l.token, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }),
    // Another origin of the same site (a subdomain) is another site's page as well.
    await start(l.token, { 'sec-fetch-site': 'same-site', origin: PUBLIC }),
    // Unknown tokens too: refused before any lookup.
    await start('Zz0000000000000000000000zz', { origin: 'https://evil.example' }),
  ];
  for (const refusal of refusals) {
    expect(refusal).toMatchObject({
      status: 403,
      body: { code: 'forbidden', retryable: false, details: { reason: 'cross_site' } },
    });
  }
  expect((await post(`${h.base}/i/${l.token}/conversations`)).status).toBe(201);
  expect((await post(`${h.base}/i/${l.token}/conversations`)).body.code).toBe('link_disabled');
});

it("starts from the link's own page, by Sec-Fetch-Site or Origin, and from clients that send neither", async () => {
  const allowed: Record<string, string>[] = [
    {},
    { 'sec-fetch-site': 'same-origin', origin: h.base },
    { 'sec-fetch-site': 'none' },
    { origin: PUBLIC },
    { origin: h.base },
    { origin: h.base.replace('http://', 'https://') },
  ];
  for (const headers of allowed) {
    const l = await h.link();
    expect(await start(l.token, headers)).toMatchObject({
      status: 201,
      body: { conversationId: expect.stringMatching(/^cnv_/) },
    });
  }
});
