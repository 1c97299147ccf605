import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';

/** The active trace context as W3C headers, to store beside work that runs later (an outbox row). */
export function captureTraceContext(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Runs `fn` inside a trace context captured earlier, so deferred work joins the trace that caused it. */
export function runInTraceContext<T>(carrier: Record<string, string> | null | undefined, fn: () => T): T {
  return context.with(propagation.extract(ROOT_CONTEXT, carrier ?? {}), fn);
}
