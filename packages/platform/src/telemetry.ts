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
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  return sdk;
}

const TOKEN_PATH = /\/i\/[^/?#]+/g;
const PATH_ATTRIBUTES = ['url.path', 'url.full', 'http.target', 'http.url'];

/** Link tokens are credentials: the paths recorded on HTTP spans name them by their route. */
export function redactSpanPaths(span: Span): void {
  const attributes = (span as Span & { attributes?: Record<string, unknown> }).attributes ?? {};
  for (const key of PATH_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string' && TOKEN_PATH.test(value))
      span.setAttribute(key, value.replace(TOKEN_PATH, '/i/:token'));
    TOKEN_PATH.lastIndex = 0;
  }
}
