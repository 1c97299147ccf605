import { newId } from '@outreach/platform';
import Redis from 'ioredis';
import { monitorRedis } from '../../test/support/redis-monitor';
import { type Harness, post, startHarness, waitFor } from './support/harness';

// A conversation id from the path only ever names a conversation of the form the runtime gives
// (`cnv_` and 20 base62 characters): any other is unknown, as a made-up one is, and never becomes
// a Redis key (`<id>:history` would name a conversation's history list, a list, not a hash).
let h: Harness;
let redis: Redis;
// A clock minute of today: the fixtures' campaigns run from a day ago.
const MINUTE = Math.floor(Date.now() / 60_000) * 60_000;

beforeAll(async () => {
  h = await startHarness({ UNKNOWN_CONVERSATIONS_PER_MINUTE: '3' });
  redis = new Redis(h.ns.env.REDIS_URL);
});

afterAll(async () => {
  redis?.disconnect();
  await h?.close();
});

/** The Redis commands (their arguments) sent while `run` runs, from every client. */
async function commandsDuring(run: () => Promise<void>): Promise<string[][]> {
  const seen: string[][] = [];
  const monitor = await monitorRedis(h.ns.env.REDIS_URL, (args) => seen.push(args));
  try {
    await run();
    // Every command sent before the marker has been seen once the marker has.
    const marker = `${h.ns.redisPrefix}marker:${newId('req')}`;
    await redis.get(marker);
    await waitFor(() => seen.some((args) => args.includes(marker)));
  } finally {
    monitor.stop();
  }
  return seen;
}

it('answers a conversation id of another form as an unknown one, counted, without a Redis key made of it', async () => {
  const l = await h.link();
  const message = (conversationId: string) =>
    post(`${h.base}/i/${l.token}/conversations/${encodeURIComponent(conversationId)}/messages`, {
      text: 'hello',
    });
  h.clock.fixed = MINUTE + 15_000;
  try {
    const started = await post(`${h.base}/i/${l.token}/conversations`);
    expect(started.status).toBe(201);
    const real = started.body.conversationId as string;
    expect((await message(real)).status).toBe(200);
    h.logs.length = 0;

    const malformed = [`${real}:history`, `${real}:rate:0`, 'cnv_short'];
    const answers: { status: number; body: unknown }[] = [];
    const commands = await commandsDuring(async () => {
      for (const id of [...malformed, `${real}:history`]) answers.push(await message(id));
    });
    for (const answer of answers.slice(0, 3)) {
      expect(answer).toMatchObject({
        status: 404,
        body: { code: 'not_found', details: { reason: 'conversation_not_found' } },
      });
    }
    // Counted by the unknown-conversation limit (3 a minute here) as made-up ids are.
    expect(answers[3]).toMatchObject({
      status: 429,
      body: { code: 'rate_limited', details: { reason: 'unknown_conversations' } },
    });
    expect(commands.filter((args) => args.some((a) => a.includes(`${h.ns.redisPrefix}link:conv:`)))).toEqual(
      [],
    );
    expect(h.logs.filter((line) => (line.level as number) >= 50)).toEqual([]);

    // The real conversation and its history are untouched.
    expect(await redis.llen(`${h.ns.redisPrefix}link:conv:${real}:history`)).toBe(2);
    expect((await message(real)).status).toBe(200);
  } finally {
    h.clock.fixed = null;
  }
});

it('answers an unexpected failure with 500 internal carrying the request id, and nothing of the failure', async () => {
  const l = await h.link();
  // A conversation key of the wrong type: Redis refuses the lookup (WRONGTYPE).
  const id = newId('cnv');
  await redis.set(`${h.ns.redisPrefix}link:conv:${id}`, 'not a hash', 'EX', 60);
  const failed = await post(
    `${h.base}/i/${l.token}/conversations/${id}/messages`,
    { text: 'hello' },
    { 'x-request-id': 'req-link-500-test' },
  );
  expect(failed.status).toBe(500);
  expect(failed.headers.get('x-request-id')).toBe('req-link-500-test');
  expect(failed.body).toMatchObject({ code: 'internal', details: { requestId: 'req-link-500-test' } });
  expect(JSON.stringify(failed.body)).not.toMatch(/WRONGTYPE|at .*\.js/);
});
