import { Counter, Histogram, Registry } from 'prom-client';
import { RequestMetrics, type RequestMetricsSpec } from './request-metrics';

const SPEC: RequestMetricsSpec = {
  counter: { name: 'http_requests_total', help: 'HTTP requests' },
  histogram: { name: 'http_request_duration_seconds', help: 'HTTP latency' },
  labelNames: ['method', 'route'],
  outcomeLabel: 'status',
  buckets: [0.001, 0.005, 0.1, 1],
};

/** [method, route, status, seconds]: on bucket bounds, between them, past the last, and 0. */
const REQUESTS: [string, string, string, number][] = [
  ['GET', '/i/:token', '200', 0.0004],
  ['GET', '/i/:token', '200', 0.001],
  ['GET', '/i/:token', '404', 0.0011],
  ['POST', '/i/:token/conversations', '201', 0.05],
  ['GET', '/i/:token', '200', 2.5],
  ['POST', '/i/:token/conversations', '429', 0],
  ['GET', '/i/:token', '200', 0.1],
];

/** The same requests recorded by prom-client's own Counter and Histogram. */
function recordedByPromClient(): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'test' });
  const counter = new Counter({
    ...SPEC.counter,
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const histogram = new Histogram({
    ...SPEC.histogram,
    labelNames: ['method', 'route'],
    buckets: [...SPEC.buckets],
    registers: [registry],
  });
  for (const [method, route, status, seconds] of REQUESTS) {
    counter.inc({ method, route, status });
    histogram.observe({ method, route }, seconds);
  }
  return registry;
}

function recordedByRequestMetrics(): { registry: Registry; metrics: RequestMetrics } {
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'test' });
  const metrics = new RequestMetrics(registry, SPEC);
  for (const [method, route, status, seconds] of REQUESTS) metrics.record([method, route], status, seconds);
  return { registry, metrics };
}

describe('RequestMetrics', () => {
  it('scrapes exactly as prom-client’s Counter and Histogram fed the same requests', async () => {
    const { registry } = recordedByRequestMetrics();
    const text = await registry.metrics();
    expect(text).toBe(await recordedByPromClient().metrics());
    // The exposition is not vacuously equal: it holds each series with its counts.
    expect(text).toContain(
      'http_requests_total{method="GET",route="/i/:token",status="200",service="test"} 4',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.001",service="test",method="GET",route="/i/:token"} 2',
    );
    expect(text).toContain(
      'http_request_duration_seconds_count{service="test",method="GET",route="/i/:token"} 5',
    );
  });

  it('answers the JSON form and single-metric reads as prom-client does, and resets', async () => {
    const { registry } = recordedByRequestMetrics();
    const expected = recordedByPromClient();
    // Exemplars are off: prom-client writes `exemplar: null` on buckets, which means none either.
    const withoutExemplars = (json: unknown) =>
      JSON.parse(JSON.stringify(json, (k, v) => (k === 'exemplar' ? undefined : v)));
    expect(withoutExemplars(await registry.getMetricsAsJSON())).toEqual(
      withoutExemplars(await expected.getMetricsAsJSON()),
    );
    expect(await registry.getSingleMetricAsString('http_request_duration_seconds')).toBe(
      await expected.getSingleMetricAsString('http_request_duration_seconds'),
    );
    registry.resetMetrics();
    expect(await registry.metrics()).not.toMatch(/^http_requests_total\{/m);
  });

  it('keeps one series per label set, whatever the outcome', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry, { ...SPEC, labelNames: ['method'], outcomeLabel: 'code' });
    metrics.record(['GetRecipient'], 'OK', 0.002);
    metrics.record(['GetRecipient'], 'NOT_FOUND', 0.003);
    const text = await registry.metrics();
    expect(text).toContain('http_requests_total{method="GetRecipient",code="OK"} 1');
    expect(text).toContain('http_requests_total{method="GetRecipient",code="NOT_FOUND"} 1');
    expect(text).toContain('http_request_duration_seconds_count{method="GetRecipient"} 2');
    expect(text).toContain('http_request_duration_seconds_sum{method="GetRecipient"} 0.005');
  });
});
