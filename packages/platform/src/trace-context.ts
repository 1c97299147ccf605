import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

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

/** A trace context, as `currentTraceContext` keeps it. */
export type TraceContext = Context;

/** The active trace context, kept by work that is done later together with other work. */
export function currentTraceContext(): TraceContext {
  return context.active();
}

/** Links to the span of each of `contexts` that has one (a context without a span links nothing). */
export function linksTo(contexts: Iterable<Context>): Link[] {
  const links: Link[] = [];
  for (const each of contexts) {
    const linked = trace.getSpanContext(each);
    if (linked && trace.isSpanContextValid(linked)) links.push({ context: linked });
  }
  return links;
}

/**
 * Runs `fn`, work done once for many requests, in a span of a trace of its own linked to the span
 * of every request it serves (`contexts`): no request's trace is its parent more than another's.
 */
export async function inSharedSpan<T>(
  name: string,
  contexts: Iterable<Context>,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  const span = trace
    .getTracer('@outreach/platform')
    .startSpan(name, { root: true, links: linksTo(contexts), attributes });
  return inSpan(span, ROOT_CONTEXT, fn);
}

/** Runs `fn` with `span` active under `parent`, marks the span failed if `fn` throws, and ends it. */
export async function inSpan<T>(span: Span, parent: Context, fn: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(parent, span), fn);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
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
