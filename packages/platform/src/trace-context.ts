import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';

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

/** Ids that may go on spans: never keys, tokens, metadata values or message text. */
export interface SpanIds {
  projectId?: string | null;
  campaignId?: string | null;
  recipientId?: string | null;
}

/** Tags the active span with the outreach ids it concerns (a no-op without telemetry). */
export function tagSpan(ids: SpanIds): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  if (ids.projectId) span.setAttribute('outreach.project_id', ids.projectId);
  if (ids.campaignId) span.setAttribute('outreach.campaign_id', ids.campaignId);
  if (ids.recipientId) span.setAttribute('outreach.recipient_id', ids.recipientId);
}
