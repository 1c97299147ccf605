import { type Harness, post, startHarness } from './support/harness';

// A message body nested as deep as JSON.parse takes is read like any other: the field's 400.
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

it('answers a message whose text is nested 30,000 arrays deep with 400, as any text of the wrong type', async () => {
  const l = await h.link();
  const started = await post(`${h.base}/i/${l.token}/conversations`);
  expect(started.status).toBe(201);
  const url = `${h.base}/i/${l.token}/conversations/${started.body.conversationId}/messages`;
  const send = async (body: string) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, body: await res.json() };
  };
  const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
  const wrongType = await send('{"text":[]}');
  expect(wrongType.status).toBe(400);
  expect(await send(`{"text":${deep}}`)).toEqual(wrongType);
  expect(await send(deep)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  // A number past 2^53 at the bottom is still found, and named.
  const deepNumber = await send(`{"text":"hi","x":${'['.repeat(30_000)}1e999${']'.repeat(30_000)}}`);
  expect(deepNumber).toMatchObject({
    status: 400,
    body: { code: 'invalid_request', details: { reason: 'number_out_of_range' } },
  });
  expect(deepNumber.body.details.pointer === `/x${'/0'.repeat(30_000)}`).toBe(true);
  // The conversation goes on.
  expect((await post(url, { text: 'hello' })).status).toBe(200);
});
