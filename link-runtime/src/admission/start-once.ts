import { AppError, isCommandTimeout, randomBase62, releaseClaim } from '@outreach/platform';
import type Redis from 'ioredis';
import { CLAIM_SCRIPT, LuaScript, SET_MADE_SCRIPT, SETTLE_ORPHAN_SCRIPT } from './admission.lua';
import { countersUnavailable } from './link-checks';

/**
 * A client's key for one conversation start (the page sends one per first message and the same
 * one again when it retries): 16 to 64 characters of base64url.
 */
export const START_KEY = /^[A-Za-z0-9_-]{16,64}$/;

// While a start with the key is being made, its value is this (never a conversation id), as every
// version with start keys reads it, so that replicas of two versions side by side (a rollout)
// agree; the request's own value is in the claim key beside it, so that a request frees only its
// own claim. Kept longer than an admission can take (see pendingSeconds).
const PENDING = '-';
// The least a start being made holds its key.
const MIN_PENDING_SECONDS = 60;
/** How long a made start is answered again for its key: longer than a customer retries. */
export const DONE_TTL_SECONDS = 600;

// A claim finds the counters missing again only if Redis loses its data again meanwhile.
const MAX_CLAIMS = 3;

const claimScript = new LuaScript(CLAIM_SCRIPT);
const settleOrphanScript = new LuaScript(SETTLE_ORPHAN_SCRIPT);
const setMadeScript = new LuaScript(SET_MADE_SCRIPT);

/** Redis key of a start key at one link. */
export const startKeyOf = (prefix: string, recipientId: string, key: string): string =>
  `${prefix}link:start:${recipientId}:${key}`;

/** Where a start key is claimed: the key itself, and the keys of CLAIM_SCRIPT it is judged with. */
export interface ClaimKeys {
  startKey: string;
  recipientKey: string;
  markerKey: string;
}

/** The key beside a start key that holds the claiming request's own value while it is made. */
export const claimKeyOf = (startKey: string): string => `${startKey}:claim`;

/**
 * How long a start being made holds its key: longer than its admission can take, so that a
 * claim whose mark lapsed is one whose process died (see CLAIM_SCRIPT). An admission's longest
 * is its durable write and the fence after a lost answer, each up to the statement timeout and the
 * client's read timeout a second later, a pool connection (5 s) for each, and a counter rebuild's
 * waits (the grace after a loss, then up to `rebuildWaitMs` for writes in flight); a minute at least.
 */
export function pendingSeconds(
  statementTimeoutMs: number,
  rebuildGraceMs: number,
  rebuildWaitMs: number,
): number {
  const longestMs = 2 * (statementTimeoutMs + 1000 + 5000) + rebuildGraceMs + rebuildWaitMs;
  return Math.max(MIN_PENDING_SECONDS, Math.ceil(longestMs / 1000) + 10);
}

/** What making a start at most once needs besides the start itself. */
export interface StartOnceDeps {
  redis: Redis;
  now: () => number;
  /** How long a start being made holds its key (see pendingSeconds). */
  pendingSeconds: number;
  /** Rebuilds the recipient's counters, and with them its start keys; `lostAt` as CLAIM_SCRIPT reports it. */
  restore: (lostAt: number) => Promise<void>;
  /** The start made with the key in the last DONE_TTL_SECONDS, as the durable record holds it. */
  findStart: () => Promise<{ conversationId: string; startedAtMs: number } | null>;
}

/**
 * Makes a conversation start at most once per client key: the first request with the key runs
 * `admit`; a request with the same key after it succeeded gets the same conversation, consuming
 * nothing, so a start whose 201 was lost on the way back is not paid twice, even when Redis lost
 * its data in between (the key is restored from the durable record with the counters) or the
 * process making it died between writing it and setting its key (the orphaned claim sends the
 * retry to the durable record). A request while the first is still being made is refused as
 * retryable; a refused or failed start frees its key.
 */
export async function startOnce(
  deps: StartOnceDeps,
  keys: ClaimKeys,
  admit: () => Promise<string>,
): Promise<{ conversationId: string; repeated: boolean }> {
  const { redis } = deps;
  const claimKey = claimKeyOf(keys.startKey);
  const claimKeys = [keys.startKey, keys.recipientKey, keys.markerKey, claimKey];
  const claim = randomBase62(12);
  // Not awaited: Redis runs it after the claim whenever it gets to them (see releaseClaim).
  const free = () => void releaseClaim(redis, claimKey, claim, keys.startKey);
  let takeOver = '';
  for (let attempt = 1; ; attempt++) {
    let outcome: number;
    let value: string | number | undefined;
    try {
      [outcome, value] = (await claimScript.run(redis, claimKeys, [
        deps.now(),
        claim,
        deps.pendingSeconds,
        DONE_TTL_SECONDS,
        takeOver,
      ])) as [number, (string | number)?];
    } catch (err) {
      // Unanswered, the claim may yet be made: a retry with the key must not find it held.
      if (isCommandTimeout(err)) free();
      throw err;
    }
    if (outcome === 1) break;
    if (outcome === 2) {
      if (!String(value).startsWith(PENDING)) return { conversationId: String(value), repeated: true };
      throw startInProgress();
    }
    if (outcome === 3) {
      // Another request claimed the key since, and its claim is orphaned too: the client retries.
      if (takeOver !== '') throw startInProgress();
      takeOver = String(value);
      const made = await deps.findStart().catch((err: unknown) => {
        throw new AppError('unavailable', undefined, { cause: err });
      });
      if (made) {
        const ttl = Math.max(1, Math.ceil((made.startedAtMs + DONE_TTL_SECONDS * 1000 - deps.now()) / 1000));
        await settleOrphanScript
          .run(redis, [keys.startKey, claimKey], [takeOver, made.conversationId, ttl])
          .catch(() => undefined);
        return { conversationId: made.conversationId, repeated: true };
      }
      continue;
    }
    if (attempt === MAX_CLAIMS) throw countersUnavailable();
    await deps.restore(Number(value));
  }
  let conversationId: string;
  try {
    conversationId = await admit();
  } catch (err) {
    free();
    throw err;
  }
  // The start is made and durable; a key that cannot be written now only loses the repeat's answer.
  await setMadeScript
    .run(redis, [keys.startKey, claimKey], [claim, conversationId, DONE_TTL_SECONDS])
    .catch(() => undefined);
  return { conversationId, repeated: false };
}

/** The refusal of a start whose key another request is using to make it. */
function startInProgress(): AppError {
  return new AppError('unavailable', 'This conversation is still being started.', {
    details: { reason: 'start_in_progress' },
    hint: 'Send the same request again in a moment.',
  });
}
