// Loaded with `node --require @outreach/platform/dist/instrumentation.js` before any
// service code, so that http, grpc, pg and ioredis are patched before first import.
import { startTelemetry } from './telemetry';

const sdk = startTelemetry({ serviceName: process.env.OTEL_SERVICE_NAME ?? 'outreach' });
if (sdk) {
  // The service's own Lifecycle flushes spans; this covers exits that bypass it.
  process.once('beforeExit', () => void sdk.shutdown());
  (globalThis as Record<string, unknown>).__outreachTelemetry = sdk;
}
