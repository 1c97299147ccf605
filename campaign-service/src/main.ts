import { ConfigError } from '@outreach/platform';
import { start } from './server';

/** Runs the service until SIGTERM/SIGINT, then shuts down in order. */
async function main(): Promise<void> {
  const service = await start(process.env);
  const stop = () => {
    service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
