import { createHash, timingSafeEqual } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import {
  type ChannelCredentials,
  type ClientOptions,
  credentials,
  status as GrpcStatus,
  InterceptingCall,
  type Interceptor,
  Metadata,
  Server,
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { clientChannelOptions, serverChannelOptions } from '@outreach/contracts';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { COMMON_CONFIG } from './config';
import { AppError, type ErrorCode, isErrorCode, isFailure, toAppError } from './errors';
import { isOutage, LogSampler, logOutage } from './log-sampler';
import type { ServiceMetrics } from './metrics';
import { type SpanIds, tagSpan } from './trace-context';

const STATUS_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(GrpcStatus).map(([name, code]) => [code, name]),
);

const CODE_KEY = 'x-error-code';
const DETAILS_KEY = 'x-error-details';
const HINT_KEY = 'x-error-hint';
const RETRYABLE_KEY = 'x-error-retryable';
// A hint that is not printable ASCII goes as UTF-8 bytes (a binary key ends in -bin).
const HINT_BIN_KEY = 'x-error-hint-bin';

// What a text metadata value may hold: gRPC refuses anything but printable ASCII, and grpc-js
// throws on it, from inside the handler's error path.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * JSON with every character outside printable ASCII escaped (`\u00e9`), so that details naming
 * what a client sent (an id, a field name, in any script) fit a text metadata value and parse
 * back exactly, also by a reader of the plain form.
 */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Mapping 1 of 2: an AppError as a gRPC status with the stable code in trailing metadata. */
export function toServiceError(err: AppError): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set(CODE_KEY, err.code);
  metadata.set(DETAILS_KEY, asciiJson(err.details));
  if (err.hint !== err.spec.hint) {
    if (PRINTABLE_ASCII.test(err.hint)) metadata.set(HINT_KEY, err.hint);
    else metadata.set(HINT_BIN_KEY, Buffer.from(err.hint, 'utf8'));
  }
  if (err.retryable !== err.spec.retryable) metadata.set(RETRYABLE_KEY, String(err.retryable));
  return { code: err.spec.grpcStatus, details: err.message, metadata };
}

/** The hint a service sent, in either form. */
function hintOf(metadata: Metadata | undefined): unknown {
  const bytes = metadata?.get(HINT_BIN_KEY)[0];
  return Buffer.isBuffer(bytes) ? bytes.toString('utf8') : metadata?.get(HINT_KEY)[0];
}

/**
 * Rebuilds the AppError a service meant from its code, message, details JSON and hint; an
 * unexpected failure (`internal`) names the caller's request id, which its client quotes to support.
 */
function appErrorOf(
  code: ErrorCode,
  message: string | undefined,
  detailsJson: unknown,
  hint: unknown,
  requestId: string | undefined,
  retryable?: unknown,
): AppError {
  let details: Record<string, unknown> = {};
  try {
    if (typeof detailsJson === 'string') details = JSON.parse(detailsJson);
  } catch {
    // Malformed details lose the details, not the error.
  }
  // The caller's own id, whatever the service saw: reads that share one call carry several.
  if (code === 'internal' && requestId) details = { ...details, requestId };
  return new AppError(code, message, {
    details,
    hint: typeof hint === 'string' ? hint : undefined,
    retryable: retryable === 'true' ? true : retryable === 'false' ? false : undefined,
  });
}

/**
 * Mapping 2 of 2: a gRPC failure back into the AppError the service meant. Transport
 * failures (down, deadline) become `unavailable`; anything unrecognised `internal`,
 * never with the driver's text.
 */
export function fromServiceError(err: unknown, requestId?: string): AppError {
  const e = err as Partial<ServiceError>;
  const code = e.metadata?.get(CODE_KEY)[0];
  if (isErrorCode(code)) {
    const m = e.metadata;
    return appErrorOf(
      code,
      e.details,
      m?.get(DETAILS_KEY)[0],
      hintOf(m),
      requestId,
      m?.get(RETRYABLE_KEY)[0],
    );
  }
  if (e.code === GrpcStatus.UNAVAILABLE || e.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new AppError('unavailable', undefined, { details: requestId ? { requestId } : {}, cause: err });
  }
  const refused = e.code === undefined ? undefined : MISCONFIGURED_CALLER[e.code];
  if (refused) {
    // A misconfiguration (INTERNAL_TOKEN differs, a certificate the server does not take), not
    // the client's fault: its caller answers 503 without detail, and logs this cause (sampled, as
    // an outage).
    return new AppError('unavailable', undefined, {
      details: requestId ? { requestId } : {},
      cause: new Error(refused),
    });
  }
  return toAppError(err, requestId);
}

/** The cause a PERMISSION_DENIED answer is logged with by the calling service. */
export const CLIENT_NAME_REFUSED =
  "a gRPC backend refused this service as PERMISSION_DENIED: its client certificate bears none of the names in that server's GRPC_TLS_CLIENT_NAMES";

/** The cause an UNAUTHENTICATED answer is logged with by the calling service. */
export const INTERNAL_TOKEN_REFUSED =
  'a gRPC backend refused this service as UNAUTHENTICATED: INTERNAL_TOKEN is missing or differs between the services';

// The statuses a gRPC server refuses a caller with for how the services are set up, and the
// cause its caller logs for each.
const MISCONFIGURED_CALLER: Partial<Record<number, string>> = {
  [GrpcStatus.UNAUTHENTICATED]: INTERNAL_TOKEN_REFUSED,
  [GrpcStatus.PERMISSION_DENIED]: CLIENT_NAME_REFUSED,
};

/** A refusal answered as one item of a batch response rather than as the call's status. */
export interface ItemRefusal {
  code?: string;
  error?: string;
  detailsJson?: string;
  hint?: string;
}

/** Mapping 1 for one item of a batch: the same code, message, details and hint, in the message. */
export function toItemRefusal(err: AppError): ItemRefusal {
  return {
    code: err.code,
    error: err.message,
    detailsJson: JSON.stringify(err.details),
    ...(err.hint === err.spec.hint ? {} : { hint: err.hint }),
  };
}

/** Mapping 2 for one item of a batch; an item with no known code is `internal`. */
export function fromItemRefusal(item: ItemRefusal, requestId?: string): AppError {
  if (isErrorCode(item.code))
    return appErrorOf(item.code, item.error, item.detailsJson, item.hint, requestId);
  return toAppError(new Error(`batch item refused with unknown code ${String(item.code)}`), requestId);
}

/**
 * Adapts an async function into a unary gRPC handler that answers exactly once and maps
 * thrown errors through the catalogue; unexpected errors are logged each time with their stack,
 * not leaked, and an outage's (`unavailable`: a store or a service it calls that did not answer)
 * at most once per interval for each method, without stacks, counting those left out (see
 * `logOutage`). With `metrics`, every call is counted by method and gRPC status name, and timed.
 * The call's span is tagged with the project, campaign and recipient ids its request names.
 */
export function unary<Req, Res>(
  logger: Logger,
  method: string,
  handler: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
  metrics?: Pick<ServiceMetrics, 'grpc'>,
  outageLog: LogSampler = new LogSampler(),
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  const labels = [method];
  return (call, callback) => {
    const started = performance.now();
    let answered = false;
    const answer = (err: Partial<ServiceError> | null, res?: Res) => {
      if (answered) return;
      answered = true;
      const code = STATUS_NAMES[err?.code ?? GrpcStatus.OK] ?? 'UNKNOWN';
      metrics?.grpc.record(labels, code, (performance.now() - started) / 1000);
      callback(err, res);
    };
    tagSpan(call.request as SpanIds);
    handler(call.request, call).then(
      (res) => answer(null, res),
      (err: unknown) => {
        const appError = toAppError(err);
        if (isFailure(appError)) {
          // The gateway's request id (ids, for reads sharing the call), to find this line by.
          const requestId = call.metadata?.get('x-request-id')[0];
          if (isOutage(appError)) {
            const fields = { method, requestId };
            logOutage(
              logger,
              outageLog,
              `${method} ${appError.code}`,
              fields,
              appError,
              'grpc handler failed',
            );
          } else logger.error({ err, method, requestId }, 'grpc handler failed');
        }
        try {
          answer(toServiceError(appError));
        } catch (mappingError) {
          // Never left unanswered, nor thrown out of here, where it would end the process.
          logger.error({ err: mappingError, method }, 'grpc error could not be mapped');
          answer({ code: GrpcStatus.INTERNAL, details: 'internal' });
        }
      },
    );
  };
}

/** Calls a callback-style unary client method as a promise with a deadline. */
export function callUnary<Req, Res>(
  client: object,
  method: string,
  request: Req,
  options: { deadlineMs?: number; metadata?: Metadata } = {},
): Promise<Res> {
  const fn = (client as Record<string, unknown>)[method] as (
    req: Req,
    md: Metadata,
    opts: { deadline: Date },
    cb: (err: ServiceError | null, res: Res) => void,
  ) => void;
  return new Promise((resolve, reject) => {
    fn.call(
      client,
      request,
      options.metadata ?? new Metadata(),
      { deadline: new Date(Date.now() + (options.deadlineMs ?? 5000)) },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

const AUTHORIZATION_KEY = 'authorization';
// Probes (Kubernetes' gRPC probes, grpc_health_probe) carry no token: health stays open.
const OPEN_SERVICE_PREFIX = '/grpc.health.v1.Health/';
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * How a gRPC server treats a call that carries no internal token (INTERNAL_TOKEN_MODE):
 * `require` refuses it; `accept-missing`, for the rollout that first brings the token to pods of
 * a release without it, lets it through (logged, sampled) while still refusing a wrong token.
 */
export type InternalTokenMode = (typeof COMMON_CONFIG.INTERNAL_TOKEN_MODE.values)[number];

/** Counts the calls a gRPC server let through on INTERNAL_TOKEN_ALSO_ACCEPTED. */
export const ALSO_ACCEPTED_CALLS_METRIC = 'grpc_server_internal_token_also_accepted_total';

/**
 * Declares `grpc_server_internal_token_also_accepted_total` on `registry`. Unlabelled, so it is
 * exported at 0 from the start: the first calls of a rotation's step 2 show in `increase()`, and
 * its staying flat tells that no caller sends the previous token any more.
 */
export function alsoAcceptedCalls(registry: Registry): Counter {
  return new Counter({
    name: ALSO_ACCEPTED_CALLS_METRIC,
    help: 'gRPC calls accepted with INTERNAL_TOKEN_ALSO_ACCEPTED rather than INTERNAL_TOKEN: callers holding the other token of a rotation',
    registers: [registry],
  });
}

/** 1 while the server accepts INTERNAL_TOKEN_ALSO_ACCEPTED, else 0: a rotation not yet finished. */
export const ALSO_ACCEPTED_SET_METRIC = 'grpc_server_internal_token_also_accepted_set';

/** How `internalTokenInterceptor` treats what is not plainly the required token. */
export interface InternalTokenCheck {
  /** INTERNAL_TOKEN_MODE: `accept-missing` lets a call carrying no token at all through. */
  mode?: InternalTokenMode;
  /** INTERNAL_TOKEN_ALSO_ACCEPTED: a second token accepted as well while INTERNAL_TOKEN is rotated. */
  alsoAccepted?: string;
  /** Counts the calls accepted on `alsoAccepted` (see `alsoAcceptedCalls`). */
  alsoAcceptedCalls?: Pick<Counter, 'inc'>;
  /** Samples the refusal lines; one per interval and method. */
  refusalLog?: LogSampler;
  /** Samples the lines of calls let through without a token or on `alsoAccepted`. */
  acceptLog?: LogSampler;
}

/**
 * A server interceptor requiring `authorization: Bearer <token>` on every call but grpc.health.v1,
 * refused UNAUTHENTICATED otherwise. Both sides are hashed first, so the constant-time comparison
 * also hides the token's length. The header is taken out of the metadata handlers see. Refusals
 * are logged at most once per interval, without what was sent. With mode `accept-missing`, a call
 * with no authorization header at all is let through (a pod of a release before the token), and
 * logged at `warn` at most once per interval and method; a wrong or malformed one is still refused.
 * With `alsoAccepted`, a call carrying that token passes too (a pod holding the other token of a
 * rotation), counted, and logged at `warn` at most once per interval and method.
 */
export function internalTokenInterceptor(
  token: string,
  logger: Logger,
  check: InternalTokenCheck = {},
): ServerInterceptor {
  const { mode = 'require', refusalLog = new LogSampler(), acceptLog = new LogSampler() } = check;
  const expected = digest(token);
  const alsoExpected = check.alsoAccepted === undefined ? undefined : digest(check.alsoAccepted);
  return (method, call) => {
    if (method.path.startsWith(OPEN_SERVICE_PREFIX)) return new ServerInterceptingCall(call);
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const sent = metadata.get(AUTHORIZATION_KEY);
            if (sent.length === 0 && mode === 'accept-missing') {
              const omitted = acceptLog.take(`missing ${method.path}`);
              if (omitted !== undefined)
                logger.warn(
                  { method: method.path, omitted },
                  'grpc call accepted without INTERNAL_TOKEN (INTERNAL_TOKEN_MODE=accept-missing): its caller runs a release without the token',
                );
              pass(metadata);
              return;
            }
            const m = /^Bearer (\S+)$/.exec(String(sent[0] ?? ''));
            const got = m ? digest(m[1]) : undefined;
            // Both comparisons run whatever the first found, and are combined only then: how long
            // the check takes tells neither which token a call carried nor how near it came to one.
            const onToken = got !== undefined && timingSafeEqual(got, expected);
            const onAlso =
              got !== undefined && alsoExpected !== undefined && timingSafeEqual(got, alsoExpected);
            if (onToken || onAlso) {
              if (onAlso) {
                check.alsoAcceptedCalls?.inc();
                const omitted = acceptLog.take(`also ${method.path}`);
                if (omitted !== undefined)
                  logger.warn(
                    { method: method.path, omitted },
                    'grpc call accepted with INTERNAL_TOKEN_ALSO_ACCEPTED: its caller holds the other token of a rotation (the previous one once INTERNAL_TOKEN is the new one)',
                  );
              }
              metadata.remove(AUTHORIZATION_KEY);
              pass(metadata);
              return;
            }
            const omitted = refusalLog.take(method.path);
            if (omitted !== undefined)
              logger.warn(
                { method: method.path, sent: m ? 'wrong token' : 'no token', omitted },
                'grpc call refused: INTERNAL_TOKEN missing or wrong',
              );
            call.sendStatus({
              code: GrpcStatus.UNAUTHENTICATED,
              details: 'internal token missing or wrong',
              metadata: new Metadata(),
            });
          },
        }),
    });
  };
}

/** What a gRPC server checks of its callers besides INTERNAL_TOKEN (`createGrpcServer`). */
export interface GrpcServerOptions {
  /** INTERNAL_TOKEN_ALSO_ACCEPTED: accepted besides the internal token; never sent. */
  alsoAccepted?: string;
  /** Where `grpc_server_internal_token_also_accepted_total` is declared and counted. */
  registry?: Registry;
  /** GRPC_TLS_CLIENT_NAMES: the names a caller's certificate must bear one of (`clientNameInterceptor`). */
  clientNames?: readonly string[];
}

/** The DNS names a peer certificate bears as subject alternative names, lower-cased. */
function dnsNamesOf(certificate: PeerCertificate | undefined): string[] {
  const names = certificate?.subjectaltname;
  if (!names) return [];
  return names
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
}

/**
 * A server interceptor refusing PERMISSION_DENIED every call whose client certificate bears none
 * of `names` (GRPC_TLS_CLIENT_NAMES), a plaintext call included: under mutual TLS a certificate of
 * the CA proves a caller is one of the services, this which one, so that a key taken from a
 * service that never calls this server opens nothing. Health checks too (unlike the internal
 * token's check): only callers make them, and a caller refused then shows as such in its
 * `dependency_up`. Refusals are logged at most once per interval and method, with the names the
 * certificate bore.
 */
export function clientNameInterceptor(
  names: readonly string[],
  logger: Logger,
  refusalLog: LogSampler = new LogSampler(),
): ServerInterceptor {
  const allowed = new Set(names.map((n) => n.toLowerCase()));
  return (method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const bore = dnsNamesOf(call.getAuthContext().sslPeerCertificate);
            if (bore.some((n) => allowed.has(n))) {
              pass(metadata);
              return;
            }
            const omitted = refusalLog.take(method.path);
            if (omitted !== undefined)
              logger.warn(
                { method: method.path, names: bore, allowed: [...allowed], omitted },
                'grpc call refused: its client certificate bears none of GRPC_TLS_CLIENT_NAMES',
              );
            call.sendStatus({
              code: GrpcStatus.PERMISSION_DENIED,
              details: 'client certificate not among the callers this server serves',
              metadata: new Metadata(),
            });
          },
        }),
    });
}

/**
 * A gRPC server with the channel options of every server (`serverChannelOptions`) that, given an
 * internal token, requires it of every call but health checks (`internalTokenInterceptor`; with
 * `internalTokenMode` `accept-missing`, a call without any token passes too; with
 * `options.alsoAccepted`, a call with that token). Without one (outside production only, see
 * `internalTokensOf`) it accepts any caller. Given `options.registry`, it declares the counter of
 * calls accepted on the second token there, at 0 even when there is none. Given
 * `options.clientNames`, it also requires a client certificate bearing one of them (`clientNameInterceptor`).
 */
export function createGrpcServer(
  internalToken: string | undefined,
  logger: Logger,
  maxConnectionAgeMs?: number,
  internalTokenMode: InternalTokenMode = 'require',
  options: GrpcServerOptions = {},
): Server {
  const counted = options.registry ? alsoAcceptedCalls(options.registry) : undefined;
  const accepting = internalToken !== undefined && options.alsoAccepted !== undefined;
  if (options.registry) {
    // A second token forgotten after a rotation keeps the old one valid for good: this shows it,
    // and OutreachInternalTokenRotationUnfinished pages once no call has used it for a while.
    new Gauge({
      name: ALSO_ACCEPTED_SET_METRIC,
      help: '1 while this gRPC server also accepts INTERNAL_TOKEN_ALSO_ACCEPTED (a rotation of INTERNAL_TOKEN not finished), else 0',
      registers: [options.registry],
    }).set(accepting ? 1 : 0);
  }
  if (accepting)
    logger.warn(
      'INTERNAL_TOKEN_ALSO_ACCEPTED is set: this gRPC server accepts a second token until it is unset, the last step of a rotation',
    );
  return new Server({
    ...serverChannelOptions(maxConnectionAgeMs),
    interceptors: [
      ...(internalToken
        ? [
            internalTokenInterceptor(internalToken, logger, {
              mode: internalTokenMode,
              alsoAccepted: options.alsoAccepted,
              alsoAcceptedCalls: counted,
            }),
          ]
        : []),
      ...(options.clientNames ? [clientNameInterceptor(options.clientNames, logger)] : []),
    ],
  });
}

/** A client interceptor adding `authorization: Bearer <token>` to every call. */
export function internalTokenSender(token: string): Interceptor {
  const value = `Bearer ${token}`;
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start: (metadata, listener, next) => {
        metadata.set(AUTHORIZATION_KEY, value);
        next(metadata, listener);
      },
    });
}

/** A client class generated from a service of a proto (`loadRecipientsProto()...RecipientService`). */
export type GrpcClientConstructor<C> = new (
  address: string,
  credentials: ChannelCredentials,
  options?: ClientOptions,
) => C;

/** How a service calls the others: the internal token it sends, and over what (TLS or plaintext). */
export interface InternalCaller {
  /** INTERNAL_TOKEN (see `internalTokensOf`); undefined outside production only. */
  token: string | undefined;
  /** From `grpcClientCredentials`; plaintext when not given. */
  credentials?: ChannelCredentials;
}

/**
 * The one way a service makes a client of another: over `caller`'s credentials (TLS when
 * GRPC_TLS_CA_FILE is set), every call carrying the internal token (when there is one), with
 * `clientChannelOptions(address)` unless other options are given.
 */
export function internalClient<C>(
  Client: GrpcClientConstructor<C>,
  address: string,
  caller: InternalCaller,
  channelOptions: Record<string, string | number> = clientChannelOptions(address),
): C {
  return new Client(address, caller.credentials ?? credentials.createInsecure(), {
    ...channelOptions,
    interceptors: caller.token ? [internalTokenSender(caller.token)] : [],
  });
}
