import type { Client } from '@grpc/grpc-js';
import type { RecipientMessage } from '@outreach/contracts';
import { AppError, callUnary, fromServiceError, sharedWhileRunning } from '@outreach/platform';

/** A recipient as the link runtime needs it. */
export type LinkedRecipient = RecipientMessage;

interface Entry {
  recipient: LinkedRecipient | null;
  expiresAt: number;
  generation: number;
}

/**
 * Recipients by link token, resolved through RecipientService.ResolveLink and cached in memory.
 * RecipientChanged events drop entries at once; the TTL is only a safety net. Concurrent misses
 * for one token share one call, and a lookup racing an invalidation is never cached.
 */
export class RecipientCache {
  private readonly entries = new Map<string, Entry>();
  /** Concurrent misses of one token share a single ResolveLink call. */
  private readonly fetchOnce = sharedWhileRunning((token: string) => this.fetchAndKeep(token));
  private readonly byId = new Map<string, string>();
  private generation = 0;

  constructor(
    private readonly client: Client,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached answer for `token` (null: no recipient has it), or undefined when none is cached. */
  peek(token: string): LinkedRecipient | null | undefined {
    const hit = this.entries.get(token);
    return hit && hit.expiresAt > this.now() ? hit.recipient : undefined;
  }

  /** The recipient of `token`, or null when no recipient has it. */
  async resolve(token: string): Promise<LinkedRecipient | null> {
    const hit = this.peek(token);
    if (hit !== undefined) return hit;
    return this.fetchOnce(token);
  }

  private async fetchAndKeep(token: string): Promise<LinkedRecipient | null> {
    const generation = this.generation;
    const recipient = await this.fetch(token);
    // An invalidation arrived during the call: the answer may predate it, so don't keep it.
    if (generation === this.generation) {
      this.entries.set(token, { recipient, expiresAt: this.now() + this.ttlMs, generation });
      if (recipient) this.byId.set(recipient.id, token);
    }
    return recipient;
  }

  /** Drops the cached entry of a token (and of the recipient id, whichever is known). */
  invalidate(token: string | undefined, recipientId?: string): void {
    this.generation++;
    if (token) this.entries.delete(token);
    const byId = recipientId ? this.byId.get(recipientId) : undefined;
    if (byId) this.entries.delete(byId);
  }

  private async fetch(token: string): Promise<LinkedRecipient | null> {
    try {
      const res = await callUnary<{ token: string }, { recipient: RecipientMessage | null; token: string }>(
        this.client,
        'ResolveLink',
        { token },
        { deadlineMs: 3000 },
      );
      return res.recipient ?? null;
    } catch (err) {
      const appError = fromServiceError(err);
      if (appError.code === 'not_found') return null;
      if (appError.code === 'internal') throw new AppError('unavailable', undefined, { cause: err });
      throw appError;
    }
  }
}
