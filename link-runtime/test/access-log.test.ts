import { type Harness, post, startHarness } from './support/harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ ACCESS_LOG: 'errors' }, { logLevel: 'info' });
});

afterAll(async () => {
  await h.close();
});

const accessLines = () => h.logs.filter((l) => l.msg === 'request');

test('with ACCESS_LOG=errors only refused requests get an access line, on the direct routes and the app', async () => {
  const l = await h.link();
  h.logs.length = 0;
  expect((await fetch(`${h.base}/i/${l.token}`)).status).toBe(200);
  const started = await post(`${h.base}/i/${l.token}/conversations`);
  expect(started.status).toBe(201);
  const conversation = `${h.base}/i/${l.token}/conversations/${started.body.conversationId}/messages`;
  expect((await post(conversation, { text: 'Hello' })).status).toBe(200);
  expect(accessLines()).toEqual([]);

  expect((await fetch(`${h.base}/i/Zz0000000000000000000000zz`)).status).toBe(404);
  expect(
    (await post(`${h.base}/i/${l.token}/conversations/cnv_unknown/messages`, { text: 'Hi' })).status,
  ).toBe(404);
  expect(accessLines().map((a) => [a.route, a.status])).toEqual([
    ['/i/:token', 404],
    ['/i/:token/conversations/:conversationId/messages', 404],
  ]);
});
