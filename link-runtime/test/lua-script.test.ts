import Redis from 'ioredis';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from '../../test/support/isolation';
import { ADMIT_SCRIPT, LuaScript, RELEASE_SCRIPT, SEED_SCRIPT } from '../src/admission/admission.lua';

describe('LuaScript', () => {
  const prefix = `${uniqueName('lua')}:`;
  const redis = new Redis(TEST_SERVERS.redis);
  afterAll(async () => {
    await clearRedisPrefix(prefix);
    await redis.quit();
  });

  it('runs by SHA-1, sending the body only while Redis does not know the script', async () => {
    // A body no Redis has seen: the first run must fall back to EVAL, later ones hit EVALSHA.
    const script = new LuaScript(`-- ${prefix}\nreturn redis.call('INCR', KEYS[1]) + tonumber(ARGV[1])`);
    const key = `${prefix}n`;
    expect((await redis.script('EXISTS', script.sha)) as number[]).toEqual([0]);
    expect(await script.run(redis, [key], [10])).toBe(11);
    expect((await redis.script('EXISTS', script.sha)) as number[]).toEqual([1]);
    expect(await script.run(redis, [key], [10])).toBe(12);
  });

  it('takes back nothing from counters rebuilt after the admission it releases', async () => {
    const [admit, seed, release] = [ADMIT_SCRIPT, SEED_SCRIPT, RELEASE_SCRIPT].map((b) => new LuaScript(b));
    const keys = [`${prefix}r`, `${prefix}r:starts`, `${prefix}c`];
    // now, window, per window, max total, budget, id, consume, ttl
    const start = (id: string) => admit.run(redis, keys, [Date.now(), 0, -1, 3, -1, id, 1, 60]);
    await seed.run(redis, keys, [0, 0, 60, 0, 'epoch1']);
    const admitted = (await start('cnv_a')) as [number, number, number, string, string];
    expect(admitted).toEqual([1, 1, 1, 'epoch1', 'epoch1']);
    // Redis loses everything; a rebuild from the durable record (cnv_a not written yet) runs.
    await redis.del(...keys);
    await seed.run(redis, keys, [0, 0, 60, 0, 'epoch2']);
    expect(await start('cnv_b')).toEqual([1, 1, 1, 'epoch2', 'epoch2']);
    // cnv_a's write fails: its release names the epoch it was counted under, so cnv_b stays counted.
    await release.run(redis, keys, ['cnv_a', admitted[3], admitted[4]]);
    expect(await redis.hget(keys[0], 'count')).toBe('1');
    expect(await redis.hget(keys[2], 'used')).toBe('1');
    // A release under the current epoch does take its admission back.
    await release.run(redis, keys, ['cnv_b', 'epoch2', 'epoch2']);
    expect(await redis.hget(keys[0], 'count')).toBe('0');
    expect(await redis.hget(keys[2], 'used')).toBe('0');
  });
});
