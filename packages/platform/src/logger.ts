import { trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths pino removes from every log line: credentials, tokens and customer text never reach logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'apiKey',
  'key',
  'token',
  'password',
  'text',
  'metadata',
  '*.apiKey',
  '*.key',
  '*.token',
  '*.password',
  '*.text',
  '*.metadata',
];

/** Creates the service's root logger: JSON lines with the service name and trace ids. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    name: service,
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceMixin,
  });
}

// The API is a no-op until the SDK is loaded, so this costs nothing without telemetry.
function traceMixin(): Record<string, string> {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx ? { traceId: ctx.traceId, spanId: ctx.spanId } : {};
}
