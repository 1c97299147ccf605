import type { Metric, Registry } from 'prom-client';

/** What a `RequestMetrics` exports: a counter and a histogram of the same requests. */
export interface RequestMetricsSpec {
  counter: { name: string; help: string };
  histogram: { name: string; help: string };
  /** The labels both metrics carry, in the order `record` takes their values. */
  labelNames: readonly string[];
  /** The label only the counter carries: how the request ended (an HTTP status, a gRPC code). */
  outcomeLabel: string;
  /** Upper bounds of the histogram's buckets in seconds, ascending. */
  buckets: readonly number[];
}

/** One label set's figures: counts by outcome, and the latency histogram (buckets not cumulated). */
interface Series {
  labels: Record<string, string>;
  outcomes: Map<string, number>;
  inBucket: number[];
  sum: number;
  count: number;
}

/** A sample as prom-client's registry formats it (`sharedLabels` are the series' own). */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
}

/**
 * Counts and times requests on a service's hot paths. prom-client's own Counter and Histogram
 * validate and hash a label object on every call, several µs a request where the request itself
 * costs tens; here a request is a map lookup and a few additions in plain fields, and the two
 * metrics are built from them only when scraped, in the exposition prom-client itself writes.
 */
export class RequestMetrics {
  private readonly series = new Map<string, Series>();

  constructor(
    registry: Registry,
    private readonly spec: RequestMetricsSpec,
  ) {
    // The registry takes any object that answers get() like a metric; these two read the fields.
    registry.registerMetric(this.exported(spec.counter, 'counter', () => this.counterSamples()));
    registry.registerMetric(this.exported(spec.histogram, 'histogram', () => this.histogramSamples()));
  }

  /** Records one request: `labelValues` in the order of `labelNames`, how it ended, how long it took. */
  record(labelValues: readonly string[], outcome: string, seconds: number): void {
    const key = labelValues.length === 1 ? labelValues[0] : labelValues.join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      series = this.newSeries(labelValues);
      this.series.set(key, series);
    }
    series.outcomes.set(outcome, (series.outcomes.get(outcome) ?? 0) + 1);
    const { buckets } = this.spec;
    let bucket = 0;
    while (bucket < buckets.length && seconds > buckets[bucket]) bucket++;
    series.inBucket[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  private newSeries(labelValues: readonly string[]): Series {
    const labels: Record<string, string> = {};
    this.spec.labelNames.forEach((name, i) => {
      labels[name] = labelValues[i] ?? '';
    });
    return {
      labels,
      outcomes: new Map(),
      inBucket: new Array(this.spec.buckets.length + 1).fill(0),
      sum: 0,
      count: 0,
    };
  }

  private counterSamples(): Sample[] {
    const samples: Sample[] = [];
    for (const series of this.series.values())
      for (const [outcome, value] of series.outcomes)
        samples.push({ labels: { ...series.labels, [this.spec.outcomeLabel]: outcome }, value });
    return samples;
  }

  private histogramSamples(): Sample[] {
    const { name } = this.spec.histogram;
    const samples: Sample[] = [];
    for (const series of this.series.values()) {
      const sharedLabels = series.labels;
      let cumulative = 0;
      this.spec.buckets.forEach((le, i) => {
        cumulative += series.inBucket[i];
        samples.push({ metricName: `${name}_bucket`, labels: { le }, sharedLabels, value: cumulative });
      });
      samples.push(
        { metricName: `${name}_bucket`, labels: { le: '+Inf' }, sharedLabels, value: series.count },
        { metricName: `${name}_sum`, labels: {}, sharedLabels, value: series.sum },
        { metricName: `${name}_count`, labels: {}, sharedLabels, value: series.count },
      );
    }
    return samples;
  }

  /**
   * A metric object for the registry: the exposition reads `getForPromString` (series labels kept
   * apart, as prom-client's histogram keeps them), the JSON form reads `get` (labels merged).
   */
  private exported(
    meta: { name: string; help: string },
    type: 'counter' | 'histogram',
    samples: () => Sample[],
  ) {
    // Read through `metric`: in OpenMetrics mode the registry renames counters on the object.
    const header = (): { name: string; help: string; type: string; aggregator: string } => ({
      name: metric.name,
      help: meta.help,
      type,
      aggregator: 'sum',
    });
    const metric = {
      ...meta,
      type,
      aggregator: 'sum',
      getForPromString: async () => ({ ...header(), values: samples() }),
      get: async () => ({
        ...header(),
        values: samples().map(({ labels, sharedLabels, ...rest }) => ({
          ...rest,
          labels: { ...labels, ...sharedLabels },
        })),
      }),
      reset: () => this.series.clear(),
    };
    // prom-client's registry types accept only its own classes, but reads nothing else than these.
    return metric as unknown as Metric;
  }
}
