#!/usr/bin/env node
/**
 * What one access line costs the process that writes it, in CPU, in one process: as every
 * request's line was written until session 12 (a child logger per request, through the service
 * logger's redaction) and as it is now (`accessLog`: the request id as a field, no redaction). Both go through the services' real logger (createLogger) to stdout,
 * which this script points at /dev/null by running itself again with stdout ignored.
 *
 * Usage: node bench/access-line.js [--lines 200000] [--rounds 5]   (after `npm run build`)
 */
const { spawnSync } = require('node:child_process');

if (process.env.ACCESS_LINE_CHILD !== '1') {
  const run = spawnSync(process.execPath, [__filename, ...process.argv.slice(2)], {
    env: { ...process.env, ACCESS_LINE_CHILD: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.exit(run.status ?? 1);
}

const { accessLog, createLogger } = require('../packages/platform/dist');
const { arg, median } = require('./lib');
const LINES = arg('lines', 200000);
const ROUNDS = arg('rounds', 5);

const logger = createLogger('link-runtime', 'info');
const access = accessLog(logger, 'all');
const ways = {
  // Until session 12: the request's child logger (made for its access line), then the line.
  childPerRequest: (i) =>
    logger
      .child({ requestId: `req-${i}` })
      .info({ method: 'GET', route: '/i/:token', status: 200, ms: 1.25 }, 'request'),
  accessLog: (i) => access(`req-${i}`, 'GET', '/i/:token', 200, 1.25),
};

/** CPU microseconds per line of `write`, after a warm-up, including the writes to stdout. */
async function measure(write) {
  for (let i = 0; i < 20000; i++) write(i);
  await new Promise((r) => setImmediate(r));
  const before = process.cpuUsage();
  for (let i = 0; i < LINES; i++) {
    write(i);
    // Let the destination write now and then, as a server's event loop would.
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 50));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / LINES;
}

(async () => {
  const results = { childPerRequest: [], accessLog: [] };
  // Alternating, so that a change of the machine's speed touches both alike.
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, write] of Object.entries(ways)) results[name].push(await measure(write));
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, xs]) => [
      name,
      {
        medianMicrosPerLine: Math.round(median(xs) * 100) / 100,
        rounds: xs.map((x) => Math.round(x * 100) / 100),
      },
    ]),
  );
  summary.ratio =
    Math.round((summary.accessLog.medianMicrosPerLine / summary.childPerRequest.medianMicrosPerLine) * 1000) /
    1000;
  console.error(JSON.stringify(summary, null, 2));
})();
