import { createHash, randomBytes } from 'node:crypto';
import { IDEMPOTENCY_TTL_MS } from '@outreach/contracts';
import {
  AppError,
  isCommandTimeout,
  jsonText,
  releaseClaim,
  requestError,
  sendError,
} from '@outreach/platform';
import type Redis from 'ioredis';
import type { Context, Middleware } from 'koa';
import type { Grant } from '../grant-cache';
import { requestBody } from './json-body';

/** Options of `idempotency`. */
export interface IdempotencyOptions {
  redis: Redis;
  prefix: string;
  /** How long a finished response is replayed. */
  ttlMs?: number;
  /** How long an unfinished request holds its key (a crashed gateway must not hold it for a day). */
  inFlightMs?: number;
}

/** What a handler may pass on of the request's key: the key (hashed with its API key's id) and its fingerprint. */
export interface IdempotencyState {
  key: string;
  fingerprint: string;
}

interface Stored {
  state: 'in_flight' | 'done';
  fingerprint: string;
  /** While in flight: the request's own, so that it releases only its own marker. */
  claim?: string;
  status?: number;
  headers?: Record<string, string>;
  body?: string;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// Headers that belong to the response itself; request id and rate-limit headers stay current.
const REPLAYED_HEADERS = ['content-type', 'location', 'retry-after', 'allow', 'www-authenticate'];

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * JSON with object keys sorted, so that the same request always has the same fingerprint; '' for
 * no body. Written without recursion (jsonText), so a body nested as deep as JSON.parse takes gets
 * its fingerprint, and then its refusal, like any other.
 */
export function canonicalJson(value: unknown): string {
  return value === undefined ? '' : jsonText(value, { sortKeys: true });
}

/** Fingerprint of what a request asks for: method, path and body. */
export function fingerprintOf(method: string, path: string, body: unknown): string {
  return sha256(`${method}\n${path}\n${canonicalJson(body)}`);
}

function bodyBytes(ctx: Context): Buffer {
  const body = ctx.body;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(body === undefined || body === null ? '' : JSON.stringify(body), 'utf8');
}

/**
 * `Idempotency-Key` for POST and PATCH: the first response under a key (per API key) is
 * kept for 24 h and replayed byte for byte with `Idempotent-Replayed: true`. The same key
 * with another method, path or body is 422; while the first request runs, 409. Server
 * errors (5xx) are not kept, so the client may retry them under the same key.
 */
export function idempotency(opts: IdempotencyOptions): Middleware {
  const ttlMs = opts.ttlMs ?? IDEMPOTENCY_TTL_MS;
  const inFlightMs = opts.inFlightMs ?? 60_000;
  const redisCall = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new AppError('unavailable', undefined, { cause: err });
    }
  };
  return async (ctx, next) => {
    // A header sent empty is a malformed key, not none: a client whose key went missing must
    // hear of it rather than lose its retries' safety.
    if (ctx.req.headers['idempotency-key'] === undefined) return next();
    const key = ctx.get('idempotency-key');
    if (!KEY_PATTERN.test(key)) {
      throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters.', {
        details: { header: 'Idempotency-Key', rule: 'pattern' },
      });
    }
    const body = await requestBody(ctx);
    const fingerprint = fingerprintOf(ctx.method, ctx.path, body);
    const grant = ctx.state.grant as Grant;
    const redisKey = `${opts.prefix}idem:${grant.keyId}:${sha256(key)}`;
    // A create records the key in its own transaction too (see the recipient service): a create
    // that outlives this gateway's deadline still answers its retry once, rather than twice.
    ctx.state.idempotency = { key: sha256(`${grant.keyId}\n${key}`), fingerprint } satisfies IdempotencyState;
    const claim = randomBytes(9).toString('base64url');
    const marker = JSON.stringify({ state: 'in_flight', fingerprint, claim } satisfies Stored);
    const release = () => releaseClaim(opts.redis, redisKey, marker);
    const taken = await redisCall(() =>
      opts.redis.set(redisKey, marker, 'PX', inFlightMs, 'NX').catch((err: unknown) => {
        // Unanswered, the marker may yet be set: released right behind it, so that the client's
        // retry is not told "in progress" for the marker's minute.
        if (isCommandTimeout(err)) void release();
        throw err;
      }),
    );
    if (taken !== 'OK') {
      const raw = await redisCall(() => opts.redis.get(redisKey));
      const stored = raw === null ? null : (JSON.parse(raw) as Stored);
      if (stored && stored.fingerprint !== fingerprint) {
        throw new AppError('idempotency_key_reused', undefined, { details: { header: 'Idempotency-Key' } });
      }
      if (!stored || stored.state === 'in_flight') {
        throw new AppError('idempotency_in_progress', undefined, {
          details: { header: 'Idempotency-Key' },
          headers: { 'Retry-After': '1' },
        });
      }
      ctx.status = stored.status ?? 200;
      for (const [name, value] of Object.entries(stored.headers ?? {})) ctx.set(name, value);
      ctx.set('Idempotent-Replayed', 'true');
      ctx.body = Buffer.from(stored.body ?? '', 'base64');
      return;
    }
    let kept = false;
    try {
      try {
        await next();
      } catch (err) {
        const appError = requestError(ctx, err);
        if (appError.spec.httpStatus >= 500) throw err;
        sendError(ctx, appError);
      }
      if (ctx.status >= 500) return;
      const bytes = bodyBytes(ctx);
      ctx.body = bytes;
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const v = ctx.response.get(name);
        if (v !== '' && v !== undefined) headers[name] = String(v);
      }
      const record: Stored = {
        state: 'done',
        fingerprint,
        status: ctx.status,
        headers,
        body: bytes.toString('base64'),
      };
      try {
        await opts.redis.set(redisKey, JSON.stringify(record), 'PX', ttlMs);
        kept = true;
      } catch (err) {
        // The request already took effect; failing it now would mislead the client.
        ctx.state.log?.warn({ err }, 'idempotent response not stored');
      }
    } finally {
      if (!kept) await release();
    }
  };
}
