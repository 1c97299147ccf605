import Redis from 'ioredis';
import { clearRedisPrefix, TEST_SERVERS, uniqueName } from '../../test/support/isolation';
import {
  ADMIT_SCRIPT,
  type AdmissionCall,
  type AdmissionReply,
  CLAIM_SCRIPT,
  LuaScript,
  packAdmissions,
  RELEASE_SCRIPT,
  SEED_SCRIPT,
  SET_MADE_SCRIPT,
  SETTLE_ORPHAN_SCRIPT,
} from '../src/admission/admission.lua';

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
    const start = async (id: string) => {
      const call: AdmissionCall = {
        keys: [keys[0], keys[1], keys[2], `${prefix}conv:${id}`],
        // now, window, per window, max total, budget, id, consume, ttls, the record's fields
        args: [Date.now(), 0, -1, 3, -1, id, 1, 60, 60, 'rcp_1', 'cmp_1', new Date().toISOString()],
      };
      const packed = packAdmissions(`${prefix}lost`, [call]);
      return ((await admit.run(redis, packed.keys, packed.args)) as AdmissionReply[])[0];
    };
    await seed.run(redis, keys, [0, 0, 60, 0, 'epoch1', 0]);
    const admitted = await start('cnv_a');
    expect(admitted).toEqual([1, 1, 1, 'epoch1', 'epoch1']);
    // Redis loses everything; a rebuild from the durable record (cnv_a not written yet) runs.
    await redis.del(...keys);
    await seed.run(redis, keys, [0, 0, 60, 0, 'epoch2', 0]);
    expect(await start('cnv_b')).toEqual([1, 1, 1, 'epoch2', 'epoch2']);
    // cnv_a's write fails: its release names the epoch it was counted under, so cnv_b stays counted.
    await release.run(redis, keys, ['cnv_a', admitted[3] as string, admitted[4] as string]);
    expect(await redis.hget(keys[0], 'count')).toBe('1');
    expect(await redis.hget(keys[2], 'used')).toBe('1');
    // A release under the current epoch does take its admission back.
    await release.run(redis, keys, ['cnv_b', 'epoch2', 'epoch2']);
    expect(await redis.hget(keys[0], 'count')).toBe('0');
    expect(await redis.hget(keys[2], 'used')).toBe('0');
  });

  it('judges the starts of one run in order, each exactly as a run of its own would', async () => {
    const admit = new LuaScript(ADMIT_SCRIPT);
    const seed = new LuaScript(SEED_SCRIPT);
    const now = Date.now();
    const recipient = (r: string) => [`${prefix}${r}`, `${prefix}${r}:starts`] as const;
    const campaign = `${prefix}budget`;
    // Recipient A: at most 2 starts a minute; recipient B: lifetime cap 3; the campaign: budget 4.
    for (const r of ['a', 'b'])
      await seed.run(redis, [...recipient(r), campaign], [0, 0, 60, 60_000, 'e1', 0]);
    const call = (r: string, id: string, limits: [number, number, number], consume = 1): AdmissionCall => ({
      keys: [...recipient(r), campaign, `${prefix}conv:${id}`],
      args: [
        now,
        limits[0],
        limits[1],
        limits[2],
        4,
        id,
        consume,
        60,
        60,
        r,
        'cmp',
        new Date(now).toISOString(),
      ],
    });
    const a = (id: string, consume = 1) => call('a', id, [60_000, 2, -1], consume);
    const b = (id: string) => call('b', id, [0, -1, 3]);
    const calls = [a('a1'), b('b1'), a('a2'), a('a3', 0), a('a4'), b('b2'), b('b3'), b('b4')];
    const packed = packAdmissions(`${prefix}lost`, calls);
    const replies = (await admit.run(redis, packed.keys, packed.args)) as AdmissionReply[];
    expect(replies.map((r) => (r[0] === 1 ? 'ok' : r[1]))).toEqual([
      'ok', // a1: window 1 of 2, budget 1 of 4
      'ok', // b1: lifetime 1 of 3, budget 2
      'ok', // a2: window 2 of 2, budget 3
      'cooldown', // a3, a check: the window is full
      'cooldown', // a4: the window is full; nothing consumed
      'ok', // b2: lifetime 2, budget 4 of 4
      'budget_exhausted', // b3: lifetime 2 of 3 allows it, the budget does not
      'budget_exhausted', // b4
    ]);
    expect(replies[3][2]).toBe(60_000);
    expect(await redis.hget(campaign, 'used')).toBe('4');
    expect(await redis.zrange(recipient('a')[1], 0, -1)).toEqual(['a1', 'a2']);
    // Only admitted starts leave a conversation record, with the fields of its own call.
    expect(await redis.hgetall(`${prefix}conv:b2`)).toEqual({
      id: 'b2',
      recipientId: 'b',
      campaignId: 'cmp',
      startedAt: new Date(now).toISOString(),
    });
    expect(await redis.exists(`${prefix}conv:a3`, `${prefix}conv:a4`, `${prefix}conv:b3`)).toBe(0);
  });

  it("refreshes the TTL of every start's counters, once per key in a run", async () => {
    const admit = new LuaScript(ADMIT_SCRIPT);
    const seed = new LuaScript(SEED_SCRIPT);
    const campaign = `${prefix}ttl:campaign`;
    const keysOf = (r: string) => [`${prefix}ttl:${r}`, `${prefix}ttl:${r}:starts`] as const;
    // Seeded with a one-minute TTL: only the admissions' refresh can make it longer.
    for (const r of ['a', 'b']) await seed.run(redis, [...keysOf(r), campaign], [0, 0, 60, 0, 'e1', 0]);
    const call = (r: string, id: string, ttl: number): AdmissionCall => ({
      keys: [...keysOf(r), campaign, `${prefix}ttl:conv:${id}`],
      args: [Date.now(), 0, -1, -1, -1, id, 1, ttl, 60, r, 'cmp', new Date().toISOString()],
    });
    const packed = packAdmissions(`${prefix}lost`, [
      call('a', 'a1', 3600),
      call('a', 'a2', 3600),
      call('b', 'b1', 7200),
    ]);
    const replies = (await admit.run(redis, packed.keys, packed.args)) as AdmissionReply[];
    expect(replies.map((r) => r[0])).toEqual([1, 1, 1]);
    const ttl = (key: string) => redis.ttl(key);
    expect(await ttl(keysOf('a')[0])).toBeGreaterThan(3500);
    expect(await ttl(keysOf('a')[0])).toBeLessThanOrEqual(3600);
    expect(await ttl(keysOf('b')[0])).toBeGreaterThan(7100);
    // The campaign's last start asked for a longer TTL than its first: the later one holds.
    expect(await ttl(campaign)).toBeGreaterThan(7100);
    expect(await redis.hget(campaign, 'used')).toBe('3');
  });

  it("leaves a conversation's record to its first message when its fields are empty", async () => {
    const admit = new LuaScript(ADMIT_SCRIPT);
    const seed = new LuaScript(SEED_SCRIPT);
    const keys = [`${prefix}lazy:r`, `${prefix}lazy:r:starts`, `${prefix}lazy:c`] as const;
    await seed.run(redis, [...keys], [0, 0, 60, 0, 'e1', 0]);
    const call: AdmissionCall = {
      keys: [...keys, `${prefix}lazy:conv:c1`],
      args: [Date.now(), 0, -1, 3, 5, 'c1', 1, 60, 60, '', '', ''],
    };
    const packed = packAdmissions(`${prefix}lost`, [call]);
    expect((await admit.run(redis, packed.keys, packed.args)) as AdmissionReply[]).toEqual([
      [1, 1, 1, 'e1', 'e1'],
    ]);
    expect(await redis.exists(`${prefix}lazy:conv:c1`)).toBe(0);
  });

  it("claims a start key only over the recipient's counters, which a seed restores with its keys", async () => {
    const [seed, claim] = [SEED_SCRIPT, CLAIM_SCRIPT].map((b) => new LuaScript(b));
    const counters = [`${prefix}keys:r`, `${prefix}keys:r:starts`, `${prefix}keys:c`];
    const [k1, k2, k3] = ['k1', 'k2', 'k3'].map((k) => `${prefix}keys:start:${k}`);
    const marker = `${prefix}keys:lost`;
    const claimOf = (key: string, now: number, request = 'req1', takeOver = '') =>
      claim.run(redis, [key, counters[0], marker, `${key}:claim`], [now, request, 60, 600, takeOver]);
    // No counters: nothing is claimed, and the first such moment is remembered as the loss.
    expect(await claimOf(k1, 1000)).toEqual([0, 1000]);
    expect(await claimOf(k1, 2000)).toEqual([0, 1000]);
    expect(await redis.exists(k1)).toBe(0);
    // k2 was claimed while its start is being made; the seed leaves it as it is and restores k1.
    await redis.set(k2, '-');
    // count, used, ttl, window, epoch, one window start, then k1 and k2's conversations and ttls
    const seedArgs = (epoch: string) => [
      1,
      1,
      60,
      60_000,
      epoch,
      1,
      500,
      'cnv_1',
      'cnv_1',
      120,
      'cnv_2',
      120,
    ];
    await seed.run(redis, [...counters, k1, k2], seedArgs('e1'));
    expect(await redis.zrange(counters[1], 0, -1)).toEqual(['cnv_1']);
    expect([await redis.get(k1), await redis.get(k2)]).toEqual(['cnv_1', '-']);
    expect(await redis.ttl(k1)).toBeGreaterThan(100);
    expect(await claimOf(k1, 3000)).toEqual([2, 'cnv_1']);
    expect(await claimOf(k2, 3000)).toEqual([2, '-']);
    expect(await claimOf(k3, 3000, 'req3')).toEqual([1]);
    // Being made, the key holds '-' as every version with start keys reads it (a rollout runs two
    // side by side); the claiming request's own value is beside it.
    expect(await redis.get(k3)).toBe('-');
    expect(await redis.get(`${k3}:claim`)).toBe('req3');
    // The claim outlives the '-', which expires first should its process die.
    expect(await redis.ttl(k3)).toBeLessThanOrEqual(60);
    expect(await redis.ttl(`${k3}:claim`)).toBeGreaterThan(500);
    expect(await claimOf(k3, 3000, 'req4')).toEqual([2, '-']);
    expect(await redis.get(`${k3}:claim`)).toBe('req3');
    // Once its '-' is gone, the claim is reported orphaned, and is taken over only by naming it.
    await redis.del(k3);
    expect(await claimOf(k3, 3000, 'req4')).toEqual([3, 'req3']);
    expect(await claimOf(k3, 3000, 'req4', 'other')).toEqual([3, 'req3']);
    expect(await claimOf(k3, 3000, 'req4', 'req3')).toEqual([1]);
    expect([await redis.get(k3), await redis.get(`${k3}:claim`)]).toEqual(['-', 'req4']);
    // A seed that finds the counters already made restores nothing.
    await redis.del(k1);
    await seed.run(redis, [...counters, k1], [1, 1, 60, 60_000, 'e2', 0, 'cnv_1', 120]);
    expect(await redis.exists(k1)).toBe(0);
  });

  it('answers an orphaned claim only while no other request settled or took it over', async () => {
    const settle = new LuaScript(SETTLE_ORPHAN_SCRIPT);
    const [key, claimKey] = [`${prefix}orphan:start`, `${prefix}orphan:start:claim`];
    await redis.set(claimKey, 'req2');
    // Taken over by req2 since the orphan req1 was looked up: left to req2.
    expect(await settle.run(redis, [key, claimKey], ['req1', 'cnv_1', 120])).toBe(0);
    expect([await redis.get(key), await redis.get(claimKey)]).toEqual([null, 'req2']);
    await redis.set(key, 'cnv_2');
    expect(await settle.run(redis, [key, claimKey], ['req2', 'cnv_1', 120])).toBe(0);
    await redis.del(key);
    expect(await settle.run(redis, [key, claimKey], ['req2', 'cnv_1', 120])).toBe(1);
    expect([await redis.get(key), await redis.exists(claimKey)]).toEqual(['cnv_1', 0]);
    expect(await redis.ttl(key)).toBeGreaterThan(100);
  });

  it('records a made start only under its own claim, leaving one taken over to the taker', async () => {
    const made = new LuaScript(SET_MADE_SCRIPT);
    const [key, claimKey] = [`${prefix}made:start`, `${prefix}made:start:claim`];
    await redis.set(key, '-');
    await redis.set(claimKey, 'req2');
    expect(await made.run(redis, [key, claimKey], ['req1', 'cnv_1', 600])).toBe(0);
    expect([await redis.get(key), await redis.get(claimKey)]).toEqual(['-', 'req2']);
    expect(await made.run(redis, [key, claimKey], ['req2', 'cnv_2', 600])).toBe(1);
    expect([await redis.get(key), await redis.exists(claimKey)]).toEqual(['cnv_2', 0]);
    expect(await redis.ttl(key)).toBeGreaterThan(500);
  });

  it('refuses to pack a start with the wrong number of arguments', () => {
    const keys = ['r', 'r:starts', 'c', 'conv'] as const;
    expect(() => packAdmissions('lost', [{ keys, args: [1, 2, 3] }])).toThrow(/12 arguments, not 3/);
  });
});
