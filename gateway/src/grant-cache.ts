import { AppError, type Clock, type ForwardedContext } from '@outreach/platform';

/** What a verified API key allows. */
export interface Grant {
  keyId: string;
  projectId: string;
  scopes: string[];
  rateLimitPerMinute: number;
  expiresAt: string | null;
}

/**
 * Looks a key hash up at the source of truth on behalf of a request (its id and trace context
 * forwarded); throws `unauthorized` for an unknown key.
 */
export type VerifyKey = (keyHash: string, forwarded?: ForwardedContext) => Promise<Grant>;

/** A revocation must be effective on every gateway within one second, so no grant is trusted longer. */
export const GRANT_TTL_MS = 1000;
/** How long a key hash found valid counts as a real client's key, not a guess (see `recentlyValid`). */
export const KNOWN_KEY_MS = 60 * 60_000;
/** The most key hashes remembered as found valid; the longest unverified go first. */
export const KNOWN_KEY_LIMIT = 10_000;

/**
 * In-process cache of verified grants by key hash. Entries live at most `ttlMs`; a
 * revocation snapshot drops them at once and keeps the key refused on this instance.
 * Concurrent look-ups of the same hash share one backend call, made on behalf of the request
 * that started it (its request id is the one the campaign service logs).
 */
export class GrantCache {
  private readonly entries = new Map<string, { grant: Grant; until: number }>();
  /** Concurrent misses of one key share a single VerifyApiKey call (as `sharedWhileRunning`). */
  private readonly running = new Map<string, Promise<Grant>>();
  private readonly revoked = new Set<string>();
  /** Key hashes found valid, with their key, when and until when, oldest verification first. */
  private readonly known = new Map<string, { keyId: string; at: number; expires: number }>();

  constructor(
    private readonly verify: VerifyKey,
    private readonly clock: Clock,
    private readonly ttlMs = GRANT_TTL_MS,
  ) {}

  /**
   * The grant of a key hash, or an `unauthorized` AppError when unknown, revoked or expired; a
   * look-up is made on behalf of the request `forwarded` describes.
   */
  async get(keyHash: string, forwarded?: ForwardedContext): Promise<Grant> {
    const now = this.clock().getTime();
    const hit = this.entries.get(keyHash);
    let grant: Grant;
    if (hit && hit.until > now) {
      grant = hit.grant;
    } else {
      if (hit) this.entries.delete(keyHash);
      grant = await this.lookUp(keyHash, forwarded);
    }
    if (this.revoked.has(grant.keyId)) {
      this.entries.delete(keyHash);
      this.known.delete(keyHash);
      throw new AppError('unauthorized', 'The API key was revoked.', { details: { reason: 'revoked' } });
    }
    if (grant.expiresAt !== null && Date.parse(grant.expiresAt) <= this.clock().getTime()) {
      this.entries.delete(keyHash);
      this.known.delete(keyHash);
      throw new AppError('unauthorized', 'The API key has expired.', { details: { reason: 'expired' } });
    }
    return grant;
  }

  /**
   * The cached grant of a key hash when `get` would return it without a look-up (fresh,
   * not revoked, not expired); `undefined` otherwise — then `get` decides.
   */
  peek(keyHash: string): Grant | undefined {
    const hit = this.entries.get(keyHash);
    if (!hit) return undefined;
    const now = this.clock().getTime();
    if (hit.until <= now || this.revoked.has(hit.grant.keyId)) return undefined;
    const { expiresAt } = hit.grant;
    if (expiresAt !== null && Date.parse(expiresAt) <= now) return undefined;
    return hit.grant;
  }

  /**
   * Whether this instance found the hash to be a valid key within `KNOWN_KEY_MS`, and has not
   * since found it refused, revoked or expired: then it is a client's own key and no guess, and
   * an address refused for its failed authentications may still have it looked up (`get` decides
   * whether it is still valid). Best effort, per instance: a new gateway knows no key yet.
   */
  recentlyValid(keyHash: string): boolean {
    const seen = this.known.get(keyHash);
    const now = this.clock().getTime();
    return (
      seen !== undefined &&
      seen.at + KNOWN_KEY_MS > now &&
      seen.expires > now &&
      !this.revoked.has(seen.keyId)
    );
  }

  /** Drops every cached grant of `keyId` and refuses it from now on. */
  revoke(keyId: string): void {
    this.revoked.add(keyId);
    for (const [hash, entry] of this.entries) if (entry.grant.keyId === keyId) this.entries.delete(hash);
  }

  /** Number of cached grants (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * One look-up per key hash at a time: a request that joins one under way shares its answer, and
   * an unexpected failure (`internal`) names the joining request's own id.
   */
  private lookUp(keyHash: string, forwarded?: ForwardedContext): Promise<Grant> {
    let call = this.running.get(keyHash);
    if (call === undefined) {
      call = this.verifyAndKeep(keyHash, forwarded).finally(() => this.running.delete(keyHash));
      this.running.set(keyHash, call);
      return call;
    }
    const requestId = forwarded?.requestId;
    return call.catch((err: unknown) => {
      if (!(err instanceof AppError) || err.code !== 'internal' || requestId === undefined) throw err;
      throw new AppError('internal', err.message, {
        details: { ...err.details, requestId },
        hint: err.hint,
        cause: err.cause,
      });
    });
  }

  private async verifyAndKeep(keyHash: string, forwarded?: ForwardedContext): Promise<Grant> {
    let grant: Grant;
    try {
      grant = await this.verify(keyHash, forwarded);
    } catch (err) {
      // Refused at the source (unknown, revoked or expired there): no longer a key found valid.
      if (err instanceof AppError && err.code === 'unauthorized') this.known.delete(keyHash);
      throw err;
    }
    const now = this.clock().getTime();
    const expires = grant.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(grant.expiresAt);
    if (!this.revoked.has(grant.keyId)) {
      this.entries.set(keyHash, { grant, until: Math.min(now + this.ttlMs, expires) });
      this.known.delete(keyHash);
      this.known.set(keyHash, { keyId: grant.keyId, at: now, expires });
      if (this.known.size > KNOWN_KEY_LIMIT) this.known.delete(this.known.keys().next().value as string);
    }
    return grant;
  }
}
