import { ConfigError } from '@outreach/platform';
import { start } from './server';

start(process.env).then(
  (running) => running.lifecycle.installSignalHandlers(),
  (err: unknown) => {
    if (err instanceof ConfigError) console.error(err.message);
    else console.error('recipient service failed to start:', (err as Error).message);
    process.exit(1);
  },
);
