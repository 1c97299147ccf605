// Loaded with `node --require @outreach/platform/dist/instrumentation.js` before any
// service code, so that http, grpc, pg and ioredis are patched before first import.
import { registerTelemetry } from './service';
import { startTelemetry } from './telemetry';

const sdk = startTelemetry({ serviceName: process.env.OTEL_SERVICE_NAME ?? 'outreach' });
if (sdk) {
  // runMain sends the last spans before it exits; this covers a process that ends without it.
  registerTelemetry(sdk);
  process.once('beforeExit', () => void sdk.shutdown());
}
