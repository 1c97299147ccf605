import { status as GrpcStatus } from '@grpc/grpc-js';

/** One entry of the error catalogue: how a stable code travels over HTTP and gRPC. */
export interface ErrorSpec {
  readonly httpStatus: number;
  readonly grpcStatus: GrpcStatus;
  readonly retryable: boolean;
  readonly message: string;
  readonly hint: string;
}

/**
 * The error catalogue. Every refusal any service sends is one of these codes; the
 * HTTP status, gRPC status and retryability are decided here and nowhere else.
 */
export const ERROR_CATALOGUE = {
  invalid_request: {
    httpStatus: 400,
    grpcStatus: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    message: 'The request is invalid.',
    hint: 'Fix the fields named in details and send the request again.',
  },
  unauthorized: {
    httpStatus: 401,
    grpcStatus: GrpcStatus.UNAUTHENTICATED,
    retryable: false,
    message: 'Authentication is required.',
    hint: 'Send a valid API key as "Authorization: Bearer <key>".',
  },
  forbidden: {
    httpStatus: 403,
    grpcStatus: GrpcStatus.PERMISSION_DENIED,
    retryable: false,
    message: 'This request is not allowed.',
    hint: 'Use a key of this project with the scope named in details.',
  },
  not_found: {
    httpStatus: 404,
    grpcStatus: GrpcStatus.NOT_FOUND,
    retryable: false,
    message: 'The resource was not found.',
    hint: 'Check the identifier and the project in the path.',
  },
  method_not_allowed: {
    httpStatus: 405,
    grpcStatus: GrpcStatus.UNIMPLEMENTED,
    retryable: false,
    message: 'This method is not allowed on this path.',
    hint: 'Use one of the methods listed in the Allow header.',
  },
  conflict: {
    httpStatus: 409,
    grpcStatus: GrpcStatus.FAILED_PRECONDITION,
    retryable: false,
    message: 'The request conflicts with the current state.',
    hint: 'See details.reason for what must change first.',
  },
  idempotency_key_reused: {
    httpStatus: 422,
    grpcStatus: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    message: 'This Idempotency-Key was already used with a different request.',
    hint: 'Use a new Idempotency-Key for a different request, or resend the original request unchanged.',
  },
  idempotency_in_progress: {
    httpStatus: 409,
    grpcStatus: GrpcStatus.ABORTED,
    retryable: true,
    message: 'A request with this Idempotency-Key is still being processed.',
    hint: 'Wait for the first request to finish, then retry.',
  },
  payload_too_large: {
    httpStatus: 413,
    grpcStatus: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    message: 'The request body is too large.',
    hint: 'Send a body of at most 1 MiB; split large batches.',
  },
  unsupported_media_type: {
    httpStatus: 415,
    grpcStatus: GrpcStatus.INVALID_ARGUMENT,
    retryable: false,
    message: 'The request body must be JSON.',
    hint: 'Send "Content-Type: application/json".',
  },
  rate_limited: {
    httpStatus: 429,
    grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED,
    retryable: true,
    message: 'Too many requests.',
    hint: 'Wait for the number of seconds in Retry-After, then retry.',
  },
  link_disabled: {
    httpStatus: 403,
    grpcStatus: GrpcStatus.PERMISSION_DENIED,
    retryable: false,
    message: 'This link is disabled.',
    hint: 'Contact the sender of this link.',
  },
  cooldown: {
    httpStatus: 429,
    grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED,
    retryable: true,
    message: 'This link has reached its limit for now.',
    hint: 'Come back after the number of seconds in Retry-After.',
  },
  budget_exhausted: {
    httpStatus: 403,
    grpcStatus: GrpcStatus.RESOURCE_EXHAUSTED,
    retryable: false,
    message: 'This conversation is currently unavailable.',
    hint: "The campaign's conversation budget is used up; the sender must raise it before new conversations can start.",
  },
  unavailable: {
    httpStatus: 503,
    grpcStatus: GrpcStatus.UNAVAILABLE,
    retryable: true,
    message: 'The service is temporarily unavailable.',
    hint: 'Retry with exponential backoff.',
  },
  internal: {
    httpStatus: 500,
    grpcStatus: GrpcStatus.INTERNAL,
    retryable: false,
    message: 'An unexpected error occurred.',
    hint: 'Quote details.requestId when reporting this.',
  },
} as const satisfies Record<string, ErrorSpec>;

/** A stable error code from the catalogue. */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** True when `code` is a code of the catalogue. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CATALOGUE, code);
}

/** The JSON body of every refusal. */
export interface ErrorBody {
  code: ErrorCode;
  error: string;
  retryable: boolean;
  hint: string;
  details: Record<string, unknown>;
}

/** The one error type services throw; its code decides every status. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly hint: string;
  /** Extra HTTP headers the refusal must carry (Retry-After, Allow, WWW-Authenticate). */
  readonly headers: Record<string, string>;
  /** Whether retrying can succeed, where this refusal knows better than its code's default. */
  readonly retryable: boolean;

  constructor(
    code: ErrorCode,
    message?: string,
    options: {
      details?: Record<string, unknown>;
      hint?: string;
      headers?: Record<string, string>;
      retryable?: boolean;
      cause?: unknown;
    } = {},
  ) {
    super(message ?? ERROR_CATALOGUE[code].message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details ?? {};
    this.hint = options.hint ?? ERROR_CATALOGUE[code].hint;
    this.headers = options.headers ?? {};
    this.retryable = options.retryable ?? ERROR_CATALOGUE[code].retryable;
  }

  get spec(): ErrorSpec {
    return ERROR_CATALOGUE[this.code];
  }

  /** The public JSON body of this error. */
  toBody(): ErrorBody {
    return {
      code: this.code,
      error: this.message,
      retryable: this.retryable,
      hint: this.hint,
      details: this.details,
    };
  }
}

/**
 * True when a refusal stems from a failure underneath (a store down, a bug), which is worth an
 * error log line, rather than from the rules (a link's campaign not active, a cap), which is not.
 */
export function isFailure(err: AppError): boolean {
  return err.code === 'internal' || err.cause !== undefined;
}

/** Node's codes for a connection refused, reset, timed out or with no route. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

// ioredis's error for a command unanswered within its commandTimeout (see createRedis).
const REDIS_COMMAND_TIMED_OUT = 'Command timed out';

/** True when `err` is ioredis's for a command unanswered within its commandTimeout: it may yet run. */
export function isCommandTimeout(err: unknown): boolean {
  return (err as { message?: unknown } | null)?.message === REDIS_COMMAND_TIMED_OUT;
}

// Redis refusing a write it has no memory for (maxmemory with noeviction): it takes writes again
// once keys expire, so such a request may well succeed later.
const REDIS_FULL = /^OOM command not allowed/;

/**
 * True when `err` says a store could not be reached: a connection refused or lost, PostgreSQL
 * shutting down or refusing connections (SQLSTATE class 08, 57P01–57P03), ioredis giving up a
 * command's retries while disconnected or its wait for an answer, Redis full and refusing writes,
 * or pg's pool losing a connection. Such a request may
 * well succeed when retried, so it is `unavailable`, not `internal`.
 */
export function isUnreachable(err: unknown): boolean {
  // Fields, not `instanceof Error`: Node's socket errors may come from another realm (a vm, jest).
  if (typeof err !== 'object' || err === null) return false;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || /^(08...|57P0[123])$/.test(code)))
    return true;
  return (
    name === 'MaxRetriesPerRequestError' ||
    isCommandTimeout(err) ||
    (typeof message === 'string' && REDIS_FULL.test(message)) ||
    (typeof message === 'string' && message.startsWith('Connection terminated'))
  );
}

/**
 * True when PostgreSQL itself refused a statement (a SQLSTATE of its own, not one of a lost
 * connection), after which nothing of it was written; false for a socket's errno (`EPIPE`), a
 * client's timeout and a lost connection, after which it may have been.
 */
export function isPostgresRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code) && !isUnreachable(err);
}

/**
 * True when PostgreSQL refused a NUL character (U+0000) in a value: text cannot hold one
 * (SQLSTATE 22021) nor can jsonb (22P05). Request schemas refuse NUL field by field; this
 * covers what reaches a query otherwise, such as an id in a path.
 */
function isNulRefused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05';
}

/** The refusal of a value holding a NUL character (U+0000), which no id or text can hold. */
export function nulCharacter(cause?: unknown): AppError {
  return new AppError(
    'invalid_request',
    'The request holds a NUL character (U+0000), which no value can hold.',
    {
      details: { reason: 'nul_character' },
      cause,
    },
  );
}

/**
 * Wraps anything thrown into an AppError: a store out of reach becomes `unavailable`, a NUL
 * character the database refused `invalid_request`, anything else unknown `internal`, none
 * leaking its text.
 */
export function toAppError(err: unknown, requestId?: string): AppError {
  if (err instanceof AppError) return err;
  if (isNulRefused(err)) return nulCharacter(err);
  const code = isUnreachable(err) ? 'unavailable' : 'internal';
  return new AppError(code, undefined, { details: requestId ? { requestId } : {}, cause: err });
}
