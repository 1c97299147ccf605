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
});
