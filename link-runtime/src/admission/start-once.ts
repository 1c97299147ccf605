import { AppError } from '@outreach/platform';
import type Redis from 'ioredis';

/**
 * A client's key for one conversation start (the page sends one per first message and the same
 * one again when it retries): 16 to 64 characters of base64url.
 */
export const START_KEY = /^[A-Za-z0-9_-]{16,64}$/;

// While a start with the key is being made: longer than any admission can take.
const PENDING = '-';
const PENDING_TTL_SECONDS = 60;
// How long a made start is answered again for its key: longer than a customer retries.
const DONE_TTL_SECONDS = 600;

/** Redis key of a start key at one link. */
const startKeyOf = (prefix: string, recipientId: string, key: string): string =>
  `${prefix}link:start:${recipientId}:${key}`;

/**
 * Makes a conversation start at most once per client key: the first request with the key runs
 * `admit`; a request with the same key after it succeeded gets the same conversation, consuming
 * nothing, so a start whose 201 was lost on the way back is not paid twice. A request while the
 * first is still being made is refused as retryable; a refused or failed start frees its key.
 */
export async function startOnce(
  redis: Redis,
  prefix: string,
  recipientId: string,
  key: string,
  admit: () => Promise<string>,
): Promise<{ conversationId: string; repeated: boolean }> {
  const redisKey = startKeyOf(prefix, recipientId, key);
  const claimed = await redis.set(redisKey, PENDING, 'EX', PENDING_TTL_SECONDS, 'NX');
  if (claimed === null) {
    const made = await redis.get(redisKey);
    if (made && made !== PENDING) return { conversationId: made, repeated: true };
    throw new AppError('unavailable', 'This conversation is still being started.', {
      details: { reason: 'start_in_progress' },
      hint: 'Send the same request again in a moment.',
    });
  }
  let conversationId: string;
  try {
    conversationId = await admit();
  } catch (err) {
    await redis.del(redisKey).catch(() => undefined);
    throw err;
  }
  // The start is made and durable; a key that cannot be written now only loses the repeat's answer.
  await redis.set(redisKey, conversationId, 'EX', DONE_TTL_SECONDS).catch(() => undefined);
  return { conversationId, repeated: false };
}
