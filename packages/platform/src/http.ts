import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Context, Middleware, Next } from 'koa';
import type { Logger } from 'pino';
import type { COMMON_CONFIG } from './config';
import type { DependencyStates } from './dependencies';
import { AppError, isFailure, toAppError } from './errors';
import type { Lifecycle } from './lifecycle';
import { isOutage, LogSampler, logOutage } from './log-sampler';

/** What a request passes on to the services it calls: its id, and the client's W3C trace context. */
export interface ForwardedContext {
  requestId: string;
  /** The client's `traceparent`, when well-formed. */
  traceparent?: string;
  /** The client's `tracestate`, kept only with a `traceparent` and when within its bounds. */
  tracestate?: string;
}

/** State every HTTP service keeps on `ctx.state`. */
export interface RequestState extends ForwardedContext {
  log: Logger;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
// W3C Trace Context: trace id and parent id (never all zeros), flags; version 00 exactly so, a
// later version (never ff) maybe with more fields after a dash, in visible ASCII (all that gRPC
// metadata, which carries it on, takes).
const TRACE_IDS = '(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}';
const TRACEPARENT = new RegExp(`^(?:00-${TRACE_IDS}|(?!00|ff)[0-9a-f]{2}-${TRACE_IDS}(?:-[\\x21-\\x7e]*)?)$`);
// At most 32 list members of key=value; 512 characters is what the spec asks a receiver to keep.
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/**
 * First middleware of every HTTP service: assigns the request id (the client's if it is
 * sane), a child logger, and turns every thrown error into the catalogue's JSON body.
 * Failures are logged at error: an unexpected one each time with its stack, an outage's
 * (`unavailable`: a store or backend that did not answer) at most once per interval for each
 * route, without stacks, counting those left out (see `logOutage`). Each request gets an access
 * line as `options.accessLog` says (see accessLog). Bodies are never logged, and the path is
 * logged as its route template so that secrets in paths (link tokens) never reach the logs.
 */
export function requestContext(
  logger: Logger,
  options: { accessLog?: AccessLogMode; outageLog?: LogSampler } = {},
): Middleware {
  const access = accessLog(logger, options.accessLog);
  const outages = options.outageLog ?? new LogSampler();
  return async (ctx: Context, next: Next) => {
    const requestId = requestIdOf(ctx.get('x-request-id'));
    const started = process.hrtime.bigint();
    ctx.state.requestId = requestId;
    const traceparent = ctx.get('traceparent');
    if (TRACEPARENT.test(traceparent)) {
      ctx.state.traceparent = traceparent;
      const tracestate = ctx.get('tracestate');
      if (TRACESTATE.test(tracestate)) ctx.state.tracestate = tracestate;
    }
    // The child logger is made on first use: most requests never log below the access line.
    let child: Logger | undefined;
    const log = () => {
      child ??= logger.child({ requestId });
      return child;
    };
    Object.defineProperty(ctx.state, 'log', { get: log, configurable: true });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } catch (err) {
      const appError = requestError(ctx, err);
      sendError(ctx, appError);
      if (isFailure(appError)) {
        if (isOutage(appError)) {
          const route = routeLabel(ctx);
          logOutage(
            ctx.state.log,
            outages,
            `${route} ${appError.code}`,
            { route },
            appError,
            'request failed',
          );
        } else ctx.state.log.error({ err }, 'request failed');
      }
    } finally {
      const route = routeLabel(ctx);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      access(requestId, ctx.method, route, ctx.status, ms);
    }
  };
}

/**
 * The refusal `err` stands for in a request under requestContext: anything unexpected is 500
 * `internal` with the request's id in `details.requestId`, as requestContext answers it. A
 * handler that turns an error into its refusal itself (to count it, say) uses this rather than
 * `toAppError` alone, whose refusal requestContext would send as it is, without the id.
 */
export function requestError(ctx: Context, err: unknown): AppError {
  return toAppError(err, (ctx.state as Partial<RequestState>).requestId);
}

/** What a request passes on to the services it calls (see requestContext). */
export function forwardedOf(ctx: Context): ForwardedContext {
  const { requestId, traceparent, tracestate } = ctx.state as RequestState;
  return { requestId, traceparent, tracestate };
}

/** The id of a request: the client's `X-Request-Id` when it is sane, otherwise a new one. */
export function requestIdOf(given: string | undefined): string {
  return given && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Which requests get an access line (ACCESS_LOG): every one, only refused or failed ones (status ≥ 400), or none. */
export type AccessLogMode = (typeof COMMON_CONFIG.ACCESS_LOG.values)[number];

/** Writes one request's access line (or, by the mode, nothing). `route` is a template, never the raw path. */
export type AccessLog = (
  requestId: string,
  method: string,
  route: string,
  status: number,
  ms: number,
) => void;

/**
 * The access-line writer of a service. Lines go at info whatever their status: a 503 is as often
 * a refusal by the rules (a halted campaign's link) or a readiness probe while starting or
 * draining; a failure logs its own error line, with its cause. They go through `logger` without
 * its redaction: a line holds only these fields, none of them secret, and redaction cost each
 * line more than writing it (~8 of ~17 µs). The request id is a field of the line: a child
 * logger per request would cost more than it.
 */
export function accessLog(logger: Logger, mode: AccessLogMode = 'all'): AccessLog {
  if (mode === 'none') return () => {};
  const access = logger.child({}, { redact: [] });
  const lowest = mode === 'errors' ? 400 : 0;
  return (requestId, method, route, status, ms) => {
    if (status >= lowest && access.isLevelEnabled('info'))
      access.info({ requestId, method, route, status, ms }, 'request');
  };
}

/** Reads the request body as UTF-8 text; past `limitBytes` it refuses with 413 `payload_too_large`. */
export async function readBodyText(ctx: Context, limitBytes: number): Promise<string> {
  return (await readBodyBytes(ctx, limitBytes)).toString('utf8');
}

/** Reads the request body's bytes; past `limitBytes` it refuses with 413 `payload_too_large`. */
async function readBodyBytes(ctx: Context, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      // Stop reading and close afterwards instead of destroying: the client still gets the 413.
      ctx.set('Connection', 'close');
      throw new AppError('payload_too_large', undefined, { details: { limitBytes } });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Writes an AppError as the response, with its extra headers. */
export function sendError(ctx: Context, err: AppError): void {
  ctx.status = err.spec.httpStatus;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.body = err.toBody();
}

/**
 * The paths `healthRoutes` answers. No router matches them, so the request metrics label them by
 * the path itself rather than `unmatched`: the HTTP alerts leave the probes out by that label.
 */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/livez', '/readyz']);

/**
 * How a request's route is labelled, in its access line and its request metrics alike: the
 * template of the route it matched (never the raw path, which may hold a link token), else
 * `template` (the route a request refused before routing was meant for), else the probe's path
 * (`/livez`, `/readyz`), else `unmatched`, so that scanners cannot blow up the series count.
 */
export function routeLabel(ctx: Context, template?: () => string | undefined): string {
  return (
    (ctx as Context & { _matchedRoute?: string })._matchedRoute ??
    template?.() ??
    (HEALTH_PATHS.has(ctx.path) ? ctx.path : 'unmatched')
  );
}

/**
 * `/livez` (process up) and `/readyz`: 503 `starting` until `started()` (a service that listens
 * before it has all it serves with, so that a long start does not fail its startup probe), 503
 * `draining` once shutdown began, otherwise 200 with each
 * dependency's state, `degraded` while one is down. A store or backend that every replica shares
 * being down does not make a replica unready: all of them would turn unready at once, and the
 * Ingress would answer every request with its own 503 page, where each replica answers by itself
 * what it can (a 503 `unavailable` in the error model, the link's unavailable page in the
 * customer's language, and everything that does not need that store). A request that came
 * through a proxy (it carries X-Forwarded-For or Forwarded: the Ingress sends the dashboard's host's every
 * path to the campaign service) gets the status without the checks: outsiders need not learn
 * which store is down. Probes and scrapers reach pods directly.
 */
export function healthRoutes(
  lifecycle: Lifecycle,
  dependencies: DependencyStates,
  started: () => boolean = () => true,
): Middleware {
  return async (ctx, next) => {
    if (ctx.path === '/livez') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path !== '/readyz') return next();
    if (!started()) {
      ctx.status = 503;
      ctx.body = { status: 'starting' };
      return;
    }
    if (lifecycle.isDraining) {
      ctx.status = 503;
      ctx.body = { status: 'draining' };
      return;
    }
    const states = await dependencies();
    const status = Object.values(states).includes('down') ? 'degraded' : 'ok';
    const proxied = ctx.get('x-forwarded-for') !== '' || ctx.get('forwarded') !== '';
    ctx.body = proxied ? { status } : { status, checks: states };
  };
}

/**
 * The parser's account of malformed JSON without the body it quotes ("…, "<body>" is not valid
 * JSON", with "..." where it is cut): a refusal should not carry the client's data, card numbers
 * say, into every log it reaches. The token, or the position where the parser gives one, stays.
 */
export function parserMessage(err: Error): string {
  return err.message.replace(/, (\.\.\.)?".*"(\.\.\.)? is not valid JSON$/s, ' in JSON');
}

/** Options of `readJsonBody`. */
export interface JsonBodyOptions {
  limitBytes?: number;
}

/**
 * Reads and parses a JSON request body with the documented refusals: 415 when the body
 * is not declared `application/json`, declares a charset other than UTF-8 or is compressed,
 * 413 past the limit (stops reading), 400 for bytes that are not UTF-8 or malformed JSON.
 * Returns undefined when there is no body.
 */
export async function readJsonBody(ctx: Context, options: JsonBodyOptions = {}): Promise<unknown> {
  const limit = options.limitBytes ?? 1024 * 1024;
  const length = Number(ctx.get('content-length') || 0);
  const chunked = ctx.get('transfer-encoding') !== '';
  if (length === 0 && !chunked) return undefined;
  // Only application/json itself: a `+json` type (merge-patch, say) promises semantics we do not
  // implement, so it is refused rather than read as if it were plain JSON.
  if (!ctx.is('application/json')) {
    throw new AppError('unsupported_media_type', undefined, {
      details: { contentType: ctx.get('content-type') || null },
    });
  }
  // JSON is UTF-8 (RFC 8259): a body declared in another charset would be misread, not converted.
  // `utf8` is the WHATWG label some clients send for it.
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError('unsupported_media_type', 'Request bodies are read as UTF-8 only.', {
      details: { contentType: ctx.get('content-type') },
      hint: 'Send the body in UTF-8, as "Content-Type: application/json" (charset=utf-8 or none).',
    });
  }
  // A compressed body read as it is would fail as malformed JSON, which would mislead its client.
  const coding = ctx.get('content-encoding').trim().toLowerCase();
  if (coding !== '' && coding !== 'identity') {
    throw new AppError('unsupported_media_type', 'Compressed request bodies are not accepted.', {
      details: { contentEncoding: ctx.get('content-encoding') },
      hint: 'Send the JSON body uncompressed, without a Content-Encoding header.',
    });
  }
  if (length > limit) throw new AppError('payload_too_large', undefined, { details: { limitBytes: limit } });
  const bytes = await readBodyBytes(ctx, limit);
  // Decoded leniently, bytes that are not UTF-8 would become U+FFFD and be stored so.
  if (!isUtf8(bytes)) {
    throw new AppError('invalid_request', 'The request body is not valid UTF-8.', {
      details: { reason: 'malformed_json', message: `Invalid UTF-8 at byte ${invalidUtf8At(bytes)}` },
      hint: 'Send the body encoded as UTF-8.',
    });
  }
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_request', 'The request body is not valid JSON.', {
      details: { reason: 'malformed_json', message: parserMessage(err as Error) },
    });
  }
  const pointer = inexactNumberAt(body);
  if (pointer !== null) {
    const problem = { pointer, rule: 'exactNumber', message: 'must be a number JSON readers keep exactly' };
    throw new AppError('invalid_request', `${pointer || 'The body'} is a number too large to keep exactly.`, {
      details: { ...problem, reason: 'number_out_of_range', problems: [problem] },
      hint: 'Send integers between -(2^53 - 1) and 2^53 - 1; a larger value as a string.',
    });
  }
  return body;
}

/**
 * The offset of the first byte that does not begin a well-formed UTF-8 sequence (Unicode's
 * table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF), or -1 when there is none.
 */
export function invalidUtf8At(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let more: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) more = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      more = 2;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      more = 3;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k <= more; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? low : 0x80) || c > (k === 1 ? high : 0xbf)) return i;
    }
    i += more + 1;
  }
  return -1;
}

/**
 * The JSON pointer of the first number that parsing could not keep exactly, or null: one too
 * large for a double (`1e999` reads as Infinity, which would be written back as null, silently
 * turning a limit off) or an integer past 2^53, whose last digits are lost. Walks with a stack of
 * its own, not by recursion: JSON.parse takes any depth (30,000 nested arrays, say), and a call
 * per level would overflow the call stack on it.
 */
export function inexactNumberAt(value: unknown): string | null {
  if (typeof value === 'number') return isExactNumber(value) ? null : '';
  // Containers still to walk and inexact numbers, each with its pointer, the next one last.
  const pending: [unknown, string][] = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [inner, pointer] = next;
    if (typeof inner === 'number') return pointer;
    if (typeof inner !== 'object' || inner === null) continue;
    const entries = Object.entries(inner);
    // Pushed last to first, so that they come off in document order; exact numbers and other
    // scalars are never pushed, nor given a pointer.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      if (typeof child === 'number' ? isExactNumber(child) : typeof child !== 'object' || child === null)
        continue;
      pending.push([child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
    }
  }
  return null;
}

function isExactNumber(value: number): boolean {
  return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
}

/** Node's codes for a client that went away before its response was written. */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * Sends the errors Koa reports outside any handler (a streamed body that broke off after its
 * headers, say) to the service's logger, instead of Koa's default: a stack trace on stderr for
 * every customer whose phone lost its signal mid-reply. A client gone is no fault: debug only.
 */
export function logAppErrors(app: Koa, logger: Logger): void {
  app.on('error', (err: NodeJS.ErrnoException, ctx?: Context) => {
    const requestId = (ctx?.state as Partial<RequestState> | undefined)?.requestId;
    if (err.code && CLIENT_GONE.has(err.code))
      logger.debug({ err, requestId }, 'client went away mid-response');
    else logger.error({ err, requestId }, 'response failed after it started');
  });
}
