import Redis from 'ioredis';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from '../../test/support/isolation';
import { LuaScript } from '../src/admission/admission.lua';

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
});
