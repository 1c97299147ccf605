#!/usr/bin/env node
/**
 * Runs outside Jest because OpenTelemetry patches modules through Node's own require,
 * which Jest's module registry bypasses. Starts the SDK with an in-memory exporter
 * BEFORE anything else is loaded, boots every service in this process, makes a batch
 * create through the gateway and halts a campaign, then prints the finished spans as JSON.
 */
const fs = require('node:fs');
const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { startTelemetry } = require('@outreach/platform/dist/telemetry');

const exporter = new InMemorySpanExporter();
const sdk = startTelemetry({ serviceName: 'outreach', exporter });

// The shared TypeScript test support is compiled on the fly with SWC (a dev dependency).
const swc = require('@swc/core');
require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

const { startSystem } = require('../support/system.ts');
const { admin, createProject, eventually } = require('../support/fixtures.ts');

(async () => {
  const sys = await startSystem();
  try {
    const fx = await createProject(sys);
    // The client's own trace (W3C traceparent), which the batch create's spans continue.
    const client = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const create = await fetch(`${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fx.keys.rw}`,
        'content-type': 'application/json',
        traceparent: `00-${client.traceId}-${client.spanId}-01`,
      },
      body: JSON.stringify({ campaignId: fx.campaignId, items: [{ label: 'a' }, { label: 'b' }] }),
    });
    if (create.status !== 201) throw new Error(`create -> ${create.status}`);
    const createRequestId = create.headers.get('x-request-id');

    // A live link: its page view and a conversation start are traced too.
    const live = await admin(sys, 'POST', `/projects/${fx.projectId}/campaigns`, {
      name: 'live',
      deviceId: fx.deviceId,
      startDate: new Date(Date.now() + 1000).toISOString(),
      endDate: new Date(Date.now() + 3600_000).toISOString(),
      budgetMode: 'metered',
    });
    const linked = await fetch(`${sys.gatewayUrl}/api/v1/projects/${fx.projectId}/recipients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.keys.rw}`, 'content-type': 'application/json' },
      body: JSON.stringify({ campaignId: live.id, items: [{ label: 'c' }] }),
    }).then((r) => r.json());
    const link = linked.results[0].link;
    await admin(sys, 'POST', `/projects/${fx.projectId}/campaigns/${live.id}/launch`);
    await eventually(
      async () => (await fetch(`${link}/conversations`, { method: 'POST' })).status === 201,
      5000,
    );
    await fetch(link);
    const token = link.split('/i/')[1];
    const linkRecipientId = linked.results[0].id;

    await admin(sys, 'POST', `/projects/${fx.projectId}/campaigns/${fx.campaignId}/launch`);
    await admin(sys, 'POST', `/projects/${fx.projectId}/campaigns/${fx.campaignId}/halt`);
    // Wait until the halt's snapshot has been consumed by another service, in the halt's trace.
    const haltTraceConsumed = () => {
      const spans = exporter.getFinishedSpans();
      const halt = spans.find(
        (x) => x.kind === 1 && String(x.attributes['url.path'] ?? '').endsWith('/halt'),
      );
      return (
        halt &&
        spans.some(
          (x) => x.name.startsWith('process ') && x.spanContext().traceId === halt.spanContext().traceId,
        )
      );
    };
    await eventually(async () => haltTraceConsumed(), 5000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const spans = exporter.getFinishedSpans().map((s) => ({
      name: s.name,
      kind: s.kind,
      traceId: s.spanContext().traceId,
      spanId: s.spanContext().spanId,
      parentSpanId: s.parentSpanContext?.spanId ?? s.parentSpanId,
      scope: s.instrumentationScope?.name ?? s.instrumentationLibrary?.name,
      attributes: s.attributes,
    }));
    process.stdout.write(
      `${JSON.stringify({ projectId: fx.projectId, campaignId: fx.campaignId, createRequestId, client, token, linkRecipientId, spans })}\n`,
    );
  } finally {
    await sys.stop();
    await sdk.shutdown();
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
