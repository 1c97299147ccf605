import { type PrivateStore, startPrivateStore } from '../../test/support/private-store';
import { type Harness, post, startHarness } from './support/harness';

// A Redis of this test's own, which it stops (SIGSTOP) as a hung or partitioned one would be.
let redis: PrivateStore;
let h: Harness;

beforeAll(async () => {
  redis = await startPrivateStore('redis');
  h = await startHarness({ REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '300' });
});

afterAll(async () => {
  await redis?.resume();
  await h?.close();
  await redis?.remove();
});

describe('a start whose admission goes unanswered', () => {
  it('is refused as unavailable and stays uncounted once Redis runs it after all', async () => {
    const l = await h.link({ recipient: { maxTotalInteractions: 2 } });
    const url = `${h.base}/i/${l.token}/conversations`;
    expect((await post(url)).status).toBe(201);

    await redis.pause();
    let refused: Awaited<ReturnType<typeof post>>;
    try {
      refused = await post(url);
    } finally {
      // Redis now runs what waited in its socket: the admission, then its release.
      await redis.resume();
    }
    expect(refused).toMatchObject({ status: 503, body: { code: 'unavailable', retryable: true } });

    // One conversation is recorded, so the cap of 2 admits exactly one more.
    expect((await post(url)).status).toBe(201);
    expect((await post(url)).body.code).toBe('link_disabled');
  });

  it("leaves a client's key free for its retry when the key's claim went unanswered", async () => {
    const l = await h.link();
    const url = `${h.base}/i/${l.token}/conversations`;
    const key = { 'idempotency-key': 'hang-retry-key-0001' };
    // A keyed start first: the counters are made and Redis knows the claim's script, so that the
    // claim below is made when Redis runs it.
    expect((await post(url, undefined, { 'idempotency-key': 'hang-first-key-0001' })).status).toBe(201);

    await redis.pause();
    let refused: Awaited<ReturnType<typeof post>>;
    try {
      refused = await post(url, undefined, key);
    } finally {
      await redis.resume();
    }
    expect(refused).toMatchObject({ status: 503, body: { code: 'unavailable', retryable: true } });
    // Not "still being started" for the claim's minute: the retry makes the start.
    const retried = await post(url, undefined, key);
    expect(retried.status).toBe(201);
    expect((await post(url, undefined, key)).body.conversationId).toBe(retried.body.conversationId);
  });
});
