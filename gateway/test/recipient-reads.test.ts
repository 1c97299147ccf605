import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { type Backends, createBackends } from '../src/clients';
import { type Harness, type Reply, startHarness } from './support/harness';
import { startTestBackends, type TestBackends } from './support/test-backends';

const base = '/api/v1/projects/prj_a';

interface Setup {
  h: Harness;
  key: string;
  /** Paths of a burst: existing recipients (one twice), one of another project, one missing. */
  paths: string[];
}

async function setUp(withoutBatchedGets: boolean): Promise<Setup> {
  const h = await startHarness({}, {}, { withoutBatchedGets });
  const { data } = h.backends;
  const key = data.addKey('prj_a', ['recipients:read', 'recipients:write']).key;
  const other = data.addKey('prj_other', ['recipients:write']).key;
  const campaignId = data.addCampaign('prj_a').id;
  const otherCampaignId = data.addCampaign('prj_other').id;
  const items = Array.from({ length: 17 }, (_, i) => ({ label: `r${i}` }));
  const mine = await h.request('POST', `${base}/recipients`, { key, body: { campaignId, items } });
  const theirs = await h.request('POST', '/api/v1/projects/prj_other/recipients', {
    key: other,
    body: { campaignId: otherCampaignId, items: [{ label: 'theirs' }] },
  });
  const ids: string[] = mine.body.results.map((r: { id: string }) => r.id);
  const paths = [...ids, ids[3], theirs.body.results[0].id, 'rcp_missing'].map(
    (id) => `${base}/recipients/${id}`,
  );
  return { h, key, paths };
}

const answer = (r: Reply) => ({ status: r.status, body: r.body });

/** Fires every path at once, after one read that warms the key's grant; then backends wait `delayMs`. */
async function burst({ h, key, paths }: Setup, delayMs = 0): Promise<Reply[]> {
  await h.request('GET', paths[0], { key });
  h.backends.data.calls.length = 0;
  h.backends.data.recipientDelayMs = delayMs;
  return Promise.all(paths.map((p) => h.request('GET', p, { key })));
}

describe.each([
  ['a recipient service with GetRecipients', false],
  ['a recipient service from before GetRecipients', true],
])('reads that arrive together, against %s', (_name, withoutBatchedGets) => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(withoutBatchedGets);
  });
  afterAll(() => s?.h.stop());

  it('each answers exactly as a lone read does', async () => {
    // Which reads share a turn depends on when the gateway reads their sockets: on a loaded
    // machine a whole burst can arrive one read per turn. So up to five bursts, each checked in
    // full, until one shared a call (the old code never makes a GetRecipients call at all).
    let calls: string[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const together = await burst(s);
      calls = [...s.h.backends.data.calls];
      const alone: Reply[] = [];
      for (const p of s.paths) alone.push(await s.h.request('GET', p, { key: s.key }));

      expect(together.map(answer)).toEqual(alone.map(answer));
      expect(together.map((r) => r.status)).toEqual([...Array(18).fill(200), 404, 404]);
      expect(together[18].body).toMatchObject({ code: 'not_found', error: 'Recipient not found.' });
      if (withoutBatchedGets || calls.includes('GetRecipients')) break;
    }
    if (withoutBatchedGets) {
      expect(calls.filter((c) => c === 'GetRecipient')).toHaveLength(s.paths.length);
    } else {
      // Shared calls: fewer calls than reads, and at least one carried several.
      expect(calls.includes('GetRecipients')).toBe(true);
      expect(calls.length).toBeLessThan(s.paths.length);
    }
  });

  it('all fail as unavailable (retryable) when the shared call misses its deadline', async () => {
    try {
      const together = await burst(s, 2500);
      expect(new Set(together.map((r) => r.status))).toEqual(new Set([503]));
      expect(together[0].body).toMatchObject({ code: 'unavailable', retryable: true });
      // Each refusal names its own request, not the first of the shared call.
      for (const r of together) expect(r.body.details.requestId).toBe(r.headers.get('x-request-id'));
    } finally {
      s.h.backends.data.recipientDelayMs = 0;
    }
  }, 15_000);
});

describe('the span of a shared call', () => {
  let backends: TestBackends;
  let clients: Backends;
  const exporter = new InMemorySpanExporter();
  beforeAll(async () => {
    backends = await startTestBackends();
    clients = createBackends({ recipients: backends.recipientAddr, campaigns: backends.campaignAddr }, 5000);
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    clients?.close();
    await backends?.stop();
  });

  it("is a trace of its own, linked to every read's span; a lone read makes none", async () => {
    const tracer = trace.getTracer('test');
    // Each read inside a request span of its own, all in one turn, as the gateway's requests are.
    const read = (id: string) =>
      tracer.startActiveSpan(`request ${id}`, async (span) => {
        await clients.getRecipient('prj_a', id).catch(() => undefined);
        span.end();
        return span.spanContext().spanId;
      });
    const requests = await Promise.all(['rcp_1', 'rcp_2', 'rcp_3'].map(read));
    const shared = exporter.getFinishedSpans().filter((s) => s.name === 'GetRecipients shared');
    expect(shared).toHaveLength(1);
    expect(shared[0].parentSpanContext).toBeUndefined();
    expect(shared[0].attributes['outreach.reads_shared']).toBe(3);
    expect(shared[0].links.map((l) => l.context.spanId).sort()).toEqual([...requests].sort());

    exporter.reset();
    await read('rcp_4');
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['request rcp_4']);
  });
});
