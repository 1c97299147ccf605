/**
 * One trace, the client's own (its traceparent), follows a batch create from the gateway
 * through gRPC into the recipient service and its PostgreSQL queries; a campaign halt
 * published on NATS and its handling in another service share one trace. Spans never carry
 * keys, tokens or message text.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

type Span = {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  scope: string;
  attributes: Record<string, unknown>;
};

let probe: {
  projectId: string;
  campaignId: string;
  token: string;
  linkRecipientId: string;
  /** The trace and span of the client's traceparent on the batch create. */
  client: { traceId: string; spanId: string };
  spans: Span[];
};

beforeAll(async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(__dirname, 'tracing/probe.js')], {
    env: { ...process.env, OTEL_SDK_DISABLED: 'false' },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 90_000,
  });
  probe = JSON.parse(stdout.trim().split('\n').pop()!);
}, 100_000);

it('links gateway, recipient service and PostgreSQL spans of a batch create in one trace', () => {
  const server = probe.spans.find(
    (s) =>
      s.scope.includes('instrumentation-http') &&
      /POST/.test(s.name) &&
      String(
        s.attributes['http.route'] ?? s.attributes['http.target'] ?? s.attributes['url.path'] ?? '',
      ).includes('/recipients'),
  );
  expect(server).toBeDefined();
  const trace = probe.spans.filter((s) => s.traceId === server!.traceId);
  const names = trace.map((s) => s.name);
  expect(names).toEqual(expect.arrayContaining(['grpc.outreach.v1.RecipientService/CreateRecipients']));
  const grpcServer = trace.find(
    (s) => s.name === 'grpc.outreach.v1.RecipientService/CreateRecipients' && s.kind === 1,
  );
  expect(grpcServer).toBeDefined();
  const pgUnderGrpc = trace.filter((s) => s.scope.includes('instrumentation-pg'));
  expect(pgUnderGrpc.length).toBeGreaterThan(0);
  // The trace is the client's own, from the traceparent it sent: its span is the gateway's parent.
  expect(server!.traceId).toBe(probe.client.traceId);
  expect(server!.parentSpanId).toBe(probe.client.spanId);
});

it('links a campaign halt to its handling in another service through NATS', () => {
  const consumed = probe.spans.filter(
    (s) =>
      s.name.startsWith('process ') &&
      String(s.attributes['messaging.destination.name']).endsWith(probe.campaignId),
  );
  expect(consumed.length).toBeGreaterThan(0);
  const haltRequest = probe.spans.find(
    (s) =>
      s.scope.includes('instrumentation-http') &&
      s.kind === 1 &&
      /halt/.test(
        String(s.attributes['http.target'] ?? s.attributes['url.path'] ?? s.attributes['http.url'] ?? ''),
      ),
  );
  expect(haltRequest).toBeDefined();
  expect(consumed.map((s) => s.traceId)).toContain(haltRequest!.traceId);
});

it('tags spans with the project, campaign and recipient they concern', () => {
  const tagged = (key: string, value: string) => probe.spans.filter((s) => s.attributes[key] === value);
  const createServer = tagged('outreach.campaign_id', probe.campaignId).filter(
    (s) => s.name === 'grpc.outreach.v1.RecipientService/CreateRecipients' && s.kind === 1,
  );
  expect(createServer.length).toBeGreaterThan(0);
  expect(createServer[0].attributes['outreach.project_id']).toBe(probe.projectId);
  const gatewaySpans = tagged('outreach.project_id', probe.projectId).filter((s) =>
    s.scope.includes('instrumentation-http'),
  );
  expect(gatewaySpans.length).toBeGreaterThan(0);
  const linkSpans = tagged('outreach.recipient_id', probe.linkRecipientId).filter((s) =>
    s.scope.includes('instrumentation-http'),
  );
  expect(linkSpans.length).toBeGreaterThanOrEqual(2);
});

it('never puts keys, tokens or customer text into span attributes', () => {
  const text = JSON.stringify(probe.spans.map((s) => s.attributes));
  expect(probe.token.length).toBeGreaterThan(20);
  expect(text).not.toContain(probe.token);
  expect(text).toContain('/i/:token');
  expect(text).not.toMatch(/ork_[0-9A-Za-z]{10,}/);
  expect(text).not.toMatch(/Bearer /);
});
