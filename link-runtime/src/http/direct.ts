import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AccessLogMode,
  type AppError,
  accessLog,
  isFailure,
  isOutage,
  LogSampler,
  logOutage,
  methodNotAllowed,
  requestIdOf,
  toAppError,
} from '@outreach/platform';
import type { Logger } from 'pino';
import { countRefusal, type LinkMetrics } from '../metrics';

// What the link runtime's two hot paths, the page and the conversation start, share: they are
// served on node:http directly, where per request the framework's objects would cost as much as
// the work itself, and answer exactly as the app's routes would.

/** Headers of every link response: links are capabilities, kept out of referrers, caches and indexes. */
export const LINK_HEADERS: Readonly<Record<string, string>> = {
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Robots-Tag': 'noindex, nofollow',
};

const JSON_TYPE = 'application/json; charset=utf-8';

/** The request id and the link headers, as name/value pairs for `writeHead`. */
export function baseHeaders(requestId: string): string[] {
  const headers = ['X-Request-Id', requestId];
  for (const name in LINK_HEADERS) headers.push(name, LINK_HEADERS[name]);
  return headers;
}

/** A request header as one string ('' when absent or repeated). */
export function headerText(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return typeof value === 'string' ? value : '';
}

/** A path segment as the router would decode it (a malformed escape stays as it is). */
function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Sends `body` as JSON with `headers` (name/value pairs) and its length. */
export function sendJson(res: ServerResponse, status: number, headers: string[], body: unknown): void {
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  headers.push('Content-Type', JSON_TYPE, 'Content-Length', String(payload.length));
  res.writeHead(status, headers);
  res.end(payload);
}

/** 405 with the catalogue's body and `Allow`, as the app answers every route's unknown methods. */
function refuseMethod(req: IncomingMessage, res: ServerResponse, allowed: readonly string[]): void {
  const refusal = methodNotAllowed(req.method ?? '', allowed);
  const headers = baseHeaders(requestIdOf(headerText(req, 'x-request-id')));
  for (const name in refusal.headers) headers.push(name, refusal.headers[name]);
  sendJson(res, refusal.spec.httpStatus, headers, refusal.toBody());
}

/**
 * The refusal `err` stands for, as a direct route answers it: counted by kind, logged as `what`
 * when a failure lies underneath (an outage's `unavailable` sampled, without stacks: see
 * `logOutage`), and its headers (Retry-After, …) added to `headers`.
 */
export function refusalOf(
  metrics: LinkMetrics,
  err: unknown,
  request: DirectRequest,
  headers: string[],
  what: string,
): AppError {
  const refusal = toAppError(err, request.requestId);
  countRefusal(metrics, refusal);
  if (isFailure(refusal)) {
    if (isOutage(refusal))
      logOutage(request.log(), request.outages, `${what} ${refusal.code}`, {}, refusal, what);
    else request.log().error({ err }, what);
  }
  for (const name in refusal.headers) headers.push(name, refusal.headers[name]);
  return refusal;
}

/** What a direct route's handler knows of its request besides the request itself. */
export interface DirectRequest {
  /** The link token, decoded as the router would. */
  token: string;
  requestId: string;
  /** The request's logger, made on first use. */
  log: () => Logger;
  /** Lets through the route's outage lines, at most one per interval (see `logOutage`). */
  outages: LogSampler;
}

/** One link route served on node:http. */
export interface DirectRoute {
  /** The route template, as metrics and access lines name it (never the token itself). */
  route: string;
  /** Matches the request URL; its first group is the token. */
  path: RegExp;
  methods: readonly string[];
  /** Answers the request, every refusal included, and returns the status it sent. */
  serve: (req: IncomingMessage, res: ServerResponse, request: DirectRequest) => Promise<number>;
}

/**
 * A node:http handler of one link route: it returns false for any other path (the caller hands
 * the request on to the app), refuses other methods with 405, and keeps the route's metrics and
 * access line around `serve`, as the app's middleware does for its routes.
 */
export function directRoute(
  deps: { logger: Logger; metrics: LinkMetrics; accessLog?: AccessLogMode },
  spec: DirectRoute,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { route } = spec;
  const access = accessLog(deps.logger, deps.accessLog);
  const outages = new LogSampler();
  return (req, res) => {
    const match = spec.path.exec(req.url ?? '');
    if (!match) return false;
    const method = req.method ?? '';
    const started = performance.now();
    if (!spec.methods.includes(method)) {
      refuseMethod(req, res, spec.methods);
      deps.metrics.http.record([method, route], '405', (performance.now() - started) / 1000);
      return true;
    }
    const requestId = requestIdOf(headerText(req, 'x-request-id'));
    let child: Logger | undefined;
    const log = () => {
      child ??= deps.logger.child({ requestId });
      return child;
    };
    spec.serve(req, res, { token: decodeSegment(match[1]), requestId, log, outages }).then(
      (status) => {
        const ms = performance.now() - started;
        deps.metrics.http.record([method, route], String(status), ms / 1000);
        access(requestId, method, route, status, ms);
      },
      (err) => {
        // serve() answers every refusal itself; this is a failure to write at all.
        log().error({ err, route }, 'request failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      },
    );
    return true;
  };
}
