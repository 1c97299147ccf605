import { type Client, Metadata } from '@grpc/grpc-js';
import { MAX_RECIPIENT_LOOKUPS, type RecipientMessage } from '@outreach/contracts';
import {
  type AppError,
  callUnary,
  coalescedUnary,
  currentTraceContext,
  type ForwardedContext,
  fromItemRefusal,
  fromServiceError,
  type ItemRefusal,
  inSharedSpan,
  type TraceContext,
} from '@outreach/platform';
import type { Call } from './clients';

/** Reads one recipient of a project on behalf of a request; refusals arrive as AppErrors. */
export type GetRecipient = (
  projectId: string,
  recipientId: string,
  forwarded?: ForwardedContext,
) => Promise<RecipientMessage>;

interface Lookup {
  projectId: string;
  recipientId: string;
  /** A read alone forwards it all; a shared call, which serves many, only the request ids. */
  forwarded?: ForwardedContext;
  /** The read's trace, which the shared call's span links to. */
  traceContext: TraceContext;
}

type Outcome = { recipient: RecipientMessage } | { refusal: AppError };

const withRequestIds = (ids: (string | undefined)[]) => {
  const metadata = new Metadata();
  const known = ids.filter((id): id is string => Boolean(id));
  if (known.length) metadata.set('x-request-id', known.join(', '));
  return metadata;
};

/**
 * Single-recipient reads that arrive together (one turn of the event loop) share one
 * `GetRecipients` call: under load the gRPC call itself, not the read, is most of a read's
 * cost, so one call per read would pay it a dozen times over. A lone read still makes its own
 * `GetRecipient` call. Each read answers exactly as its own call would: its recipient, or its
 * own refusal; a failure of the shared call (deadline, service down) fails every read in it.
 * A recipient service that predates `GetRecipients` (during a rolling upgrade) answers
 * UNIMPLEMENTED, and the batch is then read one call per recipient. `call` is the same client's
 * ordinary caller (deadline, request id, errors mapped), which single reads go through. The
 * shared call has a span of its own, linked to the span of every read it answers.
 */
export function coalescedRecipientGets(client: Client, call: Call, deadlineMs: number): GetRecipient {
  // `call` maps failures to AppErrors already; the shared call needs the raw status (UNIMPLEMENTED).
  const single = (l: Lookup): Promise<Outcome> =>
    call<RecipientMessage>(
      'GetRecipient',
      { projectId: l.projectId, recipientId: l.recipientId },
      l.forwarded,
    ).then(
      (recipient) => ({ recipient }),
      (refusal: AppError) => ({ refusal }),
    );

  const read = coalescedUnary(
    single,
    async (batch: Lookup[]): Promise<Outcome[]> => {
      const res = await inSharedSpan(
        'GetRecipients shared',
        batch.map((l) => l.traceContext),
        { 'outreach.reads_shared': batch.length },
        () =>
          callUnary<
            { lookups: unknown[] },
            { results: (ItemRefusal & { recipient: RecipientMessage | null })[] }
          >(
            client,
            'GetRecipients',
            { lookups: batch.map(({ projectId, recipientId }) => ({ projectId, recipientId })) },
            { deadlineMs, metadata: withRequestIds(batch.map((l) => l.forwarded?.requestId)) },
          ),
      );
      return batch.map((l, i) => {
        const item = res.results[i];
        if (item?.recipient) return { recipient: item.recipient };
        return { refusal: fromItemRefusal(item ?? {}, l.forwarded?.requestId) };
      });
    },
    {
      maxBatch: MAX_RECIPIENT_LOOKUPS,
      // Each read's refusal names its own request id (an `internal` body carries it).
      failed: (err, batch) => batch.map((l) => ({ refusal: fromServiceError(err, l.forwarded?.requestId) })),
    },
  );

  return async (projectId, recipientId, forwarded) => {
    const outcome = await read({ projectId, recipientId, forwarded, traceContext: currentTraceContext() });
    if ('refusal' in outcome) throw outcome.refusal;
    return outcome.recipient;
  };
}
