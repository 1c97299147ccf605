import {
  status as GrpcStatus,
  Metadata,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { AppError, isErrorCode, isFailure, toAppError } from './errors';
import type { ServiceMetrics } from './metrics';
import { type SpanIds, tagSpan } from './trace-context';

const STATUS_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(GrpcStatus).map(([name, code]) => [code, name]),
);

const CODE_KEY = 'x-error-code';
const DETAILS_KEY = 'x-error-details';
const HINT_KEY = 'x-error-hint';

/** Mapping 1 of 2: an AppError as a gRPC status with the stable code in trailing metadata. */
export function toServiceError(err: AppError): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set(CODE_KEY, err.code);
  metadata.set(DETAILS_KEY, JSON.stringify(err.details));
  if (err.hint !== err.spec.hint) metadata.set(HINT_KEY, err.hint);
  return { code: err.spec.grpcStatus, details: err.message, metadata };
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
    const raw = e.metadata?.get(DETAILS_KEY)[0];
    const hint = e.metadata?.get(HINT_KEY)[0];
    let details: Record<string, unknown> = {};
    try {
      if (typeof raw === 'string') details = JSON.parse(raw);
    } catch {
      // A malformed details header loses the details, not the error.
    }
    return new AppError(code, e.details, { details, hint: typeof hint === 'string' ? hint : undefined });
  }
  if (e.code === GrpcStatus.UNAVAILABLE || e.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new AppError('unavailable', undefined, { details: requestId ? { requestId } : {}, cause: err });
  }
  return toAppError(err, requestId);
}

/**
 * Adapts an async function into a unary gRPC handler that answers exactly once and maps
 * thrown errors through the catalogue; unexpected errors are logged, not leaked. With
 * `metrics`, every call is counted by method and gRPC status name, and timed. The call's span
 * is tagged with the project, campaign and recipient ids its request names.
 */
export function unary<Req, Res>(
  logger: Logger,
  method: string,
  handler: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
  metrics?: Pick<ServiceMetrics, 'grpcRequests' | 'grpcDuration'>,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  return (call, callback) => {
    const end = metrics?.grpcDuration.startTimer({ method });
    let answered = false;
    const answer = (err: Partial<ServiceError> | null, res?: Res) => {
      if (answered) return;
      answered = true;
      end?.();
      metrics?.grpcRequests.inc({ method, code: STATUS_NAMES[err?.code ?? GrpcStatus.OK] ?? 'UNKNOWN' });
      callback(err, res);
    };
    tagSpan(call.request as SpanIds);
    handler(call.request, call).then(
      (res) => answer(null, res),
      (err: unknown) => {
        const appError = toAppError(err);
        if (isFailure(appError)) logger.error({ err, method }, 'grpc handler failed');
        answer(toServiceError(appError));
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
