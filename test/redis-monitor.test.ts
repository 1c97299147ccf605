import Redis from 'ioredis';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from './support/isolation';
import { monitorRedis } from './support/redis-monitor';

const prefix = `test:${uniqueName('mon')}:`;
let redis: Redis;

beforeAll(() => {
  redis = new Redis(TEST_SERVERS.redis);
});

afterAll(async () => {
  redis.disconnect();
  await clearRedisPrefix(prefix);
});

/** Runs `send` under a new monitor and returns every command seen up to the one naming `key`. */
async function seenUntil(key: string, send: () => Promise<unknown>): Promise<string[][]> {
  const seen: string[][] = [];
  let reached!: () => void;
  const keySeen = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const monitor = await monitorRedis(TEST_SERVERS.redis, (args) => {
    seen.push(args);
    if (args[1] === key) reached();
  });
  try {
    await send();
    await keySeen;
  } finally {
    monitor.stop();
  }
  return seen;
}

test('hands each command over with its arguments as sent, whatever bytes they hold', async () => {
  const key = `${prefix}say "hi"\\ now\r\n\tnaïve ✓`;
  const seen = await seenUntil(key, () => redis.set(key, 'value with spaces'));
  expect(seen.find((args) => args[1] === key)).toEqual(['set', key, 'value with spaces']);
});

test('starts cleanly while other clients keep Redis busy, and sees what is sent after it started', async () => {
  // Another client's commands stream through while monitors start, as other suites' do in CI:
  // their first lines arrive in the same read as MONITOR's reply.
  let flooding = true;
  const flood = (async () => {
    while (flooding) await Promise.all(Array.from({ length: 50 }, (_, i) => redis.get(`${prefix}f:${i}`)));
  })();
  try {
    for (let round = 0; round < 20; round++) {
      const marker = `${prefix}marker:${round}`;
      const seen = await seenUntil(marker, () => redis.get(marker));
      // Other suites share this Redis: only this test's keys are judged.
      const ours = seen.filter((args) => args.some((a) => a.startsWith(prefix)));
      expect(ours.filter((args) => args.length !== 2 || args[0] !== 'get')).toEqual([]);
      expect(ours).toContainEqual(['get', marker]);
    }
  } finally {
    flooding = false;
    await flood;
  }
});
