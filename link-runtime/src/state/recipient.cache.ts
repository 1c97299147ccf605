import type { Client } from '@grpc/grpc-js';
import { MAX_LINK_LOOKUPS, type RecipientMessage } from '@outreach/contracts';
import {
  AppError,
  callUnary,
  coalescedUnary,
  currentTraceContext,
  fromServiceError,
  inSharedSpan,
  sharedWhileRunning,
  type TraceContext,
} from '@outreach/platform';
import { LRUCache } from 'lru-cache';

/** A recipient as the link runtime needs it. */
export type LinkedRecipient = RecipientMessage;

/** A token to look up, with the trace of the request that asked (a shared call links to it). */
interface Lookup {
  token: string;
  traceContext: TraceContext;
}

const DEADLINE_MS = 3000;

interface Entry {
  recipient: LinkedRecipient | null;
  expiresAt: number;
}

/**
 * Recipients by link token, resolved through RecipientService.ResolveLink and cached in memory.
 * RecipientChanged events drop entries at once; the TTL is only a safety net. Concurrent misses
 * for one token share one call, misses of many tokens that arrive together (a campaign's launch)
 * share one ResolveLinks call, and a lookup racing an invalidation is never cached. The cache
 * holds at most `maxBytes` (estimated, see entrySize), dropping the least recently used links
 * first: every link ever opened, and every made-up token a client tries, would otherwise stay.
 */
export class RecipientCache {
  private readonly entries: LRUCache<string, Entry>;
  /** Concurrent misses of one token share a single ResolveLink call. */
  private readonly fetchOnce = sharedWhileRunning((token: string) => this.fetchAndKeep(token));
  /** Misses of one turn share a ResolveLinks call (see coalescedUnary). */
  private readonly lookUp = coalescedUnary(
    (lookup: Lookup) => this.resolveOne(lookup.token),
    (lookups: Lookup[]) => this.resolveSeveral(lookups),
    {
      maxBatch: MAX_LINK_LOOKUPS,
      failed: (err) => {
        throw lookupFailure(err);
      },
    },
  );
  private readonly byId = new Map<string, string>();
  private generation = 0;

  constructor(
    private readonly client: Client,
    private readonly ttlMs: number,
    maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: entrySize,
      // The id index goes with its entry (unless the id points at another token by now).
      dispose: (entry, token) => {
        const id = entry.recipient?.id;
        if (id !== undefined && this.byId.get(id) === token) this.byId.delete(id);
      },
    });
  }

  /** The cached answer for `token` (null: no recipient has it), or undefined when none is cached. */
  peek(token: string): LinkedRecipient | null | undefined {
    const hit = this.entries.get(token);
    if (hit === undefined) return undefined;
    if (hit.expiresAt > this.now()) return hit.recipient;
    this.entries.delete(token);
    return undefined;
  }

  /** How many links are cached, and their estimated bytes (see entrySize). */
  get stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.entries.calculatedSize };
  }

  /** The recipient of `token`, or null when no recipient has it. */
  async resolve(token: string): Promise<LinkedRecipient | null> {
    const hit = this.peek(token);
    if (hit !== undefined) return hit;
    return this.fetchOnce(token);
  }

  private async fetchAndKeep(token: string): Promise<LinkedRecipient | null> {
    const generation = this.generation;
    const recipient = await this.lookUp({ token, traceContext: currentTraceContext() });
    // An invalidation arrived during the call: the answer may predate it, so don't keep it.
    if (generation === this.generation) {
      this.entries.set(token, { recipient, expiresAt: this.now() + this.ttlMs });
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

  private async resolveOne(token: string): Promise<LinkedRecipient | null> {
    try {
      const res = await callUnary<{ token: string }, { recipient: RecipientMessage | null; token: string }>(
        this.client,
        'ResolveLink',
        { token },
        { deadlineMs: DEADLINE_MS },
      );
      return res.recipient ?? null;
    } catch (err) {
      const failure = lookupFailure(err);
      if (failure.code === 'not_found') return null;
      throw failure;
    }
  }

  private async resolveSeveral(lookups: Lookup[]): Promise<(LinkedRecipient | null)[]> {
    const res = await inSharedSpan(
      'ResolveLinks shared',
      lookups.map((l) => l.traceContext),
      { 'outreach.links_shared': lookups.length },
      () =>
        callUnary<{ tokens: string[] }, { results: { recipient: RecipientMessage | null }[] }>(
          this.client,
          'ResolveLinks',
          { tokens: lookups.map((l) => l.token) },
          { deadlineMs: DEADLINE_MS },
        ),
    );
    // A short answer would have the missing tokens cached as absent: refuse it whole instead.
    if (res.results.length !== lookups.length)
      throw new AppError('unavailable', undefined, {
        cause: new Error(`ResolveLinks answered ${res.results.length} of ${lookups.length} tokens`),
      });
    return res.results.map((r) => r.recipient ?? null);
  }
}

/** A failed lookup as the link's visitor sees it: a fault of the service is a retryable unavailable. */
function lookupFailure(err: unknown): AppError {
  const appError = fromServiceError(err);
  return appError.code === 'internal' ? new AppError('unavailable', undefined, { cause: err }) : appError;
}

/**
 * What an entry holds, estimated: two bytes per character of its token and of the recipient's
 * strings (instructions, messages and metadata make up nearly all of it), plus the objects around
 * them.
 */
function entrySize(entry: Entry, token: string): number {
  let size = 300 + 2 * token.length;
  const recipient = entry.recipient;
  if (!recipient) return size;
  for (const value of Object.values(recipient)) if (typeof value === 'string') size += 2 * value.length;
  for (const key in recipient.metadata) size += 50 + 2 * (key.length + recipient.metadata[key].length);
  return size;
}
