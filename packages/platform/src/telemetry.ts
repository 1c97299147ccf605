import type { Span } from '@opentelemetry/api';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** Options of `startTelemetry`. */
export interface TelemetryOptions {
  serviceName: string;
  /** Tests pass an in-memory exporter; otherwise OTLP is used when OTEL_* says so. */
  exporter?: SpanExporter;
}

/** True when the standard OTEL_* variables ask for trace export. */
export function otlpConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER && env.OTEL_TRACES_EXPORTER !== 'none') return true;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the OpenTelemetry SDK with the http, grpc, pg and ioredis instrumentations.
 * Must run before those modules are imported (see instrumentation.ts). Without an
 * exporter and without OTEL_* configuration nothing is started, so nothing slows down.
 */
export function startTelemetry(options: TelemetryOptions): NodeSDK | undefined {
  if (!options.exporter && !otlpConfigured()) return undefined;
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    spanProcessors: options.exporter ? [new SimpleSpanProcessor(options.exporter)] : undefined,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => /^\/(livez|readyz|metrics)/.test(req.url ?? ''),
        requestHook: redactSpanPaths,
      }),
      new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      // The command's name only: its keys name client addresses and conversations.
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  return sdk;
}

const TOKEN_PATH = /\/i\/[^/?#]+/g;
const QUERY_VALUE = /=[^&#]*/g;
const PATH_ATTRIBUTES = ['url.path', 'url.full', 'http.target', 'http.url'];

/** The query of a URL (or the whole of `url.query`) with its names kept and its values left out. */
function withoutQueryValues(key: string, value: string): string {
  if (key === 'url.query') return value.replace(QUERY_VALUE, '=');
  const at = value.indexOf('?');
  return at < 0 ? value : value.slice(0, at) + value.slice(at).replace(QUERY_VALUE, '=');
}

/**
 * Link tokens are credentials: the paths recorded on HTTP spans name them by their route. Query
 * values may be personal (the dashboard's search by external id, a sample customer message):
 * spans keep only their names.
 */
export function redactSpanPaths(span: Span): void {
  const attributes = (span as Span & { attributes?: Record<string, unknown> }).attributes ?? {};
  for (const key of [...PATH_ATTRIBUTES, 'url.query']) {
    const value = attributes[key];
    if (typeof value !== 'string') continue;
    const redacted = withoutQueryValues(key, value.replace(TOKEN_PATH, '/i/:token'));
    if (redacted !== value) span.setAttribute(key, redacted);
  }
}
