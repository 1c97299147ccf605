import { createHash } from 'node:crypto';
import type Redis from 'ioredis';

/** How many arguments each start takes in ADMIT_SCRIPT. */
export const ADMISSION_ARGS = 12;

/**
 * The admission script: every cap of conversation starts, checked and consumed in one atomic
 * step so that no burst, however parallel, admits more than a cap allows. One run takes any
 * number of starts (those arriving together, see `packAdmissions`) and judges them one after
 * another in the order given, exactly as that many runs of their own would.
 *
 * KEYS[1] marker string   ms when counters were first found missing since Redis lost its data
 * then four keys per start:
 *   recipient hash  {count, seeded}     lifetime interactions of the recipient
 *   recipient zset  member=conversation, score=start ms (the rolling window)
 *   campaign hash   {used, seeded}      conversations admitted in the campaign
 *   conversation hash                   written on admission, so a start is one round trip
 * `seeded` holds the epoch of the rebuild that made the counter (see SEED_SCRIPT).
 * ARGV, twelve per start (`ADMISSION_ARGS`): now ms, window ms (0 = no window), max per window
 *   (-1 = none), max total (-1 = none), budget (-1 = unlimited), conversation id, 1 = consume /
 *   0 = only check, key ttl seconds, conversation ttl seconds, then the conversation's
 *   recipientId, campaignId and startedAt (empty when only checking, or when the conversation's
 *   record is left to its first message: see CONVERSATION_RECORD_AT_START).
 *
 * Replies, one per start in order: {1, count, used, recipient epoch, campaign epoch} admitted
 *   (or would be); {0, 'missing', since, recipient missing, campaign missing} a counter is not in
 *   Redis: rebuild it (the ones flagged 1) from PostgreSQL, then retry; `since` is when this Redis
 *   was first found without its data (KEYS[1]);
 *   {0, 'link_disabled'} | {0, 'cooldown', retryAfterMs} | {0, 'budget_exhausted'}.
 * Checks run in the product's order: lifetime cap, rolling window, budget.
 */
export const ADMIT_SCRIPT = `
-- Starts of one run often share a counter (every start of a campaign shares its budget): each
-- counter is read once per run, judged and counted here, and written back once at the end with
-- its TTL refreshed, as the TTL the run's last start asked for. Nothing else runs meanwhile, so
-- this is exactly what a read and an increment per start would do, with fewer calls.
local counters = {}
local function counter(key, field)
  local c = counters[key]
  if not c then
    local fields = redis.call('HMGET', key, 'seeded', field)
    c = {field = field, epoch = fields[1], value = tonumber(fields[2] or '0'), added = 0}
    counters[key] = c
  end
  return c
end
local function admit(k, a)
  local starts, conversation = KEYS[k + 1], KEYS[k + 3]
  local now = tonumber(ARGV[a])
  local windowMs = tonumber(ARGV[a + 1])
  local perWindow = tonumber(ARGV[a + 2])
  local maxTotal = tonumber(ARGV[a + 3])
  local budget = tonumber(ARGV[a + 4])
  local consume = ARGV[a + 6] == '1'
  local ttl = tonumber(ARGV[a + 7])
  local recipient = counter(KEYS[k], 'count')
  local campaign = counter(KEYS[k + 2], 'used')
  if not recipient.epoch or not campaign.epoch then
    local since = redis.call('GET', KEYS[1])
    if not since then
      since = ARGV[a]
      redis.call('SET', KEYS[1], since)
    end
    return {0, 'missing', tonumber(since), recipient.epoch and 0 or 1, campaign.epoch and 0 or 1}
  end
  local count = recipient.value + recipient.added
  if maxTotal >= 0 and count >= maxTotal then
    return {0, 'link_disabled'}
  end
  if windowMs > 0 then
    redis.call('ZREMRANGEBYSCORE', starts, '-inf', now - windowMs)
    if perWindow >= 0 and redis.call('ZCARD', starts) >= perWindow then
      local oldest = redis.call('ZRANGE', starts, 0, 0, 'WITHSCORES')
      local wait = windowMs
      if oldest[2] then wait = tonumber(oldest[2]) + windowMs - now end
      return {0, 'cooldown', wait}
    end
  end
  local used = campaign.value + campaign.added
  if budget >= 0 and used >= budget then
    return {0, 'budget_exhausted'}
  end
  if not consume then
    return {1, count, used, recipient.epoch, campaign.epoch}
  end
  recipient.added = recipient.added + 1
  recipient.ttl = ttl
  campaign.added = campaign.added + 1
  campaign.ttl = ttl
  if windowMs > 0 then
    redis.call('ZADD', starts, now, ARGV[a + 5])
    redis.call('PEXPIRE', starts, windowMs + 1000)
  end
  if ARGV[a + 9] ~= '' then
    redis.call('HSET', conversation, 'id', ARGV[a + 5], 'recipientId', ARGV[a + 9],
      'campaignId', ARGV[a + 10], 'startedAt', ARGV[a + 11])
    redis.call('EXPIRE', conversation, tonumber(ARGV[a + 8]))
  end
  return {1, count + 1, used + 1, recipient.epoch, campaign.epoch}
end
local replies = {}
for i = 0, (#KEYS - 1) / 4 - 1 do
  replies[i + 1] = admit(2 + i * 4, 1 + i * ${ADMISSION_ARGS})
end
for key, c in pairs(counters) do
  if c.added > 0 then
    redis.call('HINCRBY', key, c.field, c.added)
    redis.call('EXPIRE', key, c.ttl)
  end
end
return replies
`;

/** One conversation start (or a check that consumes nothing) for ADMIT_SCRIPT. */
export interface AdmissionCall {
  /** Recipient hash, recipient window zset, campaign hash, conversation hash. */
  keys: readonly [string, string, string, string];
  /** The start's `ADMISSION_ARGS` arguments, in the script's order. */
  args: readonly (string | number)[];
}

/** The reply of one start: see ADMIT_SCRIPT. */
export type AdmissionReply = [
  number,
  string | number,
  (number | string)?,
  (string | number)?,
  (string | number)?,
];

/** KEYS and ARGV of one ADMIT_SCRIPT run judging `calls` in order. */
export function packAdmissions(
  markerKey: string,
  calls: readonly AdmissionCall[],
): { keys: string[]; args: (string | number)[] } {
  const keys: string[] = [markerKey];
  const args: (string | number)[] = [];
  for (const call of calls) {
    if (call.args.length !== ADMISSION_ARGS)
      throw new Error(`an admission takes ${ADMISSION_ARGS} arguments, not ${call.args.length}`);
    keys.push(...call.keys);
    args.push(...call.args);
  }
  return { keys, args };
}

/**
 * Seeds the counters from the durable record when they are missing. Existing counters are
 * never lowered (another instance may have seeded and admitted meanwhile, and admissions still
 * being written are only in Redis): a seed only raises a count and adds window starts by
 * conversation id, so a rebuild can never refund anything. Each counter it makes carries the
 * seed's epoch, so that taking back an admission counted under an earlier epoch (one the
 * rebuild could not see) changes nothing. The seed that makes a recipient's counter also
 * restores the client's keys of its recent starts (see CLAIM_SCRIPT), none overwriting a key
 * Redis holds.
 * KEYS: the recipient hash, recipient zset and campaign hash of ADMIT_SCRIPT, then one start key
 * per keyed start; ARGV: recipient count, campaign count (-1 for a counter not counted: it is
 * left as it is), ttl seconds, window ms, epoch, the number of window starts n, then n pairs of
 * (start ms, conversation id) for the starts inside the window, then for each start key its
 * (conversation id, ttl seconds).
 */
export const SEED_SCRIPT = `
local ttl = tonumber(ARGV[3])
local windowEnd = 6 + 2 * tonumber(ARGV[6])
if tonumber(ARGV[1]) >= 0 and redis.call('HEXISTS', KEYS[1], 'seeded') == 0 then
  local held = tonumber(redis.call('HGET', KEYS[1], 'count') or '0')
  local count = math.max(held, tonumber(ARGV[1]))
  redis.call('HSET', KEYS[1], 'count', count, 'seeded', ARGV[5])
  redis.call('EXPIRE', KEYS[1], ttl)
  for i = 7, windowEnd, 2 do
    redis.call('ZADD', KEYS[2], tonumber(ARGV[i]), ARGV[i + 1])
  end
  if windowEnd > 6 then redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[4]) + 1000) end
  for k = 4, #KEYS do
    local a = windowEnd + 1 + (k - 4) * 2
    redis.call('SET', KEYS[k], ARGV[a], 'EX', tonumber(ARGV[a + 1]), 'NX')
  end
end
if tonumber(ARGV[2]) >= 0 and redis.call('HEXISTS', KEYS[3], 'seeded') == 0 then
  local held = tonumber(redis.call('HGET', KEYS[3], 'used') or '0')
  redis.call('HSET', KEYS[3], 'used', math.max(held, tonumber(ARGV[2])), 'seeded', ARGV[5])
  redis.call('EXPIRE', KEYS[3], ttl)
end
return 1
`;

/**
 * Claims a client's key for one start at a link. Judged only while the recipient's counters are
 * in Redis: the seed that makes them restores the keys of the recipient's recent starts from the
 * durable record (SEED_SCRIPT), so the key of a start already written is never found free just
 * because Redis lost its data. A start still being written when Redis loses it has nothing to
 * restore yet: a retry in that moment starts a second conversation.
 * While its start is being made, the start key holds '-' (what every version takes for a start in
 * progress) and the claim key beside it the claiming request's own value, by which it frees them.
 * The claim key outlives the '-' (as long as a made start is answered again): a claim whose '-'
 * expired (it outlasts any admission: see pendingSeconds), neither made nor freed, is one whose
 * process died, perhaps after its start was written, so it is reported as orphaned for the caller to look the start up in the durable
 * record; a claim naming that orphan as the one it takes over then claims the key.
 * KEYS: the start key, the recipient hash of ADMIT_SCRIPT, the marker of ADMIT_SCRIPT's KEYS[1],
 * the claim key; ARGV: now ms, the claiming request's value, the '-' ttl seconds, the claim key's
 * ttl seconds, the orphaned claim taken over (or '').
 * Replies: {1} claimed; {2, value} held, by a start made (its conversation id) or being made
 * ('-'); {3, claim} orphaned by that claim; {0, since} the recipient's counters are missing:
 * rebuild them, then claim again (`since` as in ADMIT_SCRIPT's 'missing').
 */
export const CLAIM_SCRIPT = `
if redis.call('HEXISTS', KEYS[2], 'seeded') == 0 then
  local since = redis.call('GET', KEYS[3])
  if not since then
    since = ARGV[1]
    redis.call('SET', KEYS[3], since)
  end
  return {0, tonumber(since)}
end
local held = redis.call('GET', KEYS[1])
if held then return {2, held} end
local orphan = redis.call('GET', KEYS[4])
if orphan and orphan ~= ARGV[5] then return {3, orphan} end
redis.call('SET', KEYS[1], '-', 'EX', tonumber(ARGV[3]))
redis.call('SET', KEYS[4], ARGV[2], 'EX', tonumber(ARGV[4]))
return {1}
`;

/**
 * Records a start made under a claim: the start key holds its conversation and the claim goes,
 * only while the claim is still this request's; one taken over as orphaned (see CLAIM_SCRIPT) is
 * left to the request that took it. KEYS: the start key, the claim key; ARGV: the claim, the
 * conversation id, its ttl seconds.
 */
export const SET_MADE_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
redis.call('DEL', KEYS[2])
return 1
`;

/**
 * Answers an orphaned claim (see CLAIM_SCRIPT) with the start the durable record holds for it,
 * unless another request settled or took over the claim meanwhile. KEYS: the start key, the
 * claim key; ARGV: the orphaned claim, the conversation id, its ttl seconds.
 */
export const SETTLE_ORPHAN_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] or redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
redis.call('DEL', KEYS[2])
return 1
`;

/**
 * Takes back one admission whose durable record could not be written, so the cache does not
 * keep a conversation that never happened. A counter rebuilt since the admission (another
 * epoch) never counted it and is left alone. KEYS: one start's four keys of ADMIT_SCRIPT (recipient
 * hash, recipient zset, campaign hash, conversation hash); ARGV: conversation id,
 * the recipient and campaign epochs the admission was counted under.
 */
export const RELEASE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'seeded') == ARGV[2] then redis.call('HINCRBY', KEYS[1], 'count', -1) end
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HGET', KEYS[3], 'seeded') == ARGV[3] then redis.call('HINCRBY', KEYS[3], 'used', -1) end
if KEYS[4] then redis.call('DEL', KEYS[4]) end
return 1
`;

/**
 * Takes back a start whose admission went unanswered (its command timed out, so it may have run
 * or may yet run: Redis runs a connection's commands in order, so this runs after it). The
 * conversation's record, written by the same script run that counted it, tells whether it was
 * admitted; without it (Redis lost its data since, or the record is left to the first message)
 * nothing is taken back. KEYS: one start's four keys of ADMIT_SCRIPT; ARGV: conversation id.
 */
export const RELEASE_UNANSWERED_SCRIPT = `
if redis.call('HGET', KEYS[4], 'id') ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'seeded') == 1 then redis.call('HINCRBY', KEYS[1], 'count', -1) end
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HEXISTS', KEYS[3], 'seeded') == 1 then redis.call('HINCRBY', KEYS[3], 'used', -1) end
redis.call('DEL', KEYS[4])
return 1
`;

/** A Lua script run by its SHA-1 (EVALSHA), loaded with EVAL only when Redis does not know it yet. */
export class LuaScript {
  readonly sha: string;

  constructor(readonly body: string) {
    this.sha = createHash('sha1').update(body).digest('hex');
  }

  /** Runs the script; a Redis that lost its script cache (restart, SCRIPT FLUSH) gets the body. */
  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.body, keys.length, ...keys, ...args);
    }
  }
}
