import { ConfigError } from '@outreach/platform';
import { start } from './server';

start(process.env).then(
  (service) => {
    const stop = () =>
      service.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  },
  (err: unknown) => {
    if (err instanceof ConfigError) console.error(err.message);
    else console.error('link runtime failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
