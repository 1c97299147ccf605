#!/usr/bin/env node
/**
 * Benchmarks, measured in one run on this machine, each next to its baselines:
 *  - bare node:http hello, and a bare Koa route making one unary gRPC call to an echo server;
 *  - the gateway: single-recipient reads, and bulk creates in 200-item batches;
 *  - the link runtime: conversation starts (every admission check) and page loads; and a
 *    campaign's launch: first page loads and first starts at links never opened before.
 * Every service runs as its own process, as in production; the load generator is wrk (Debian's
 * package) when installed, else autocannon in this process.
 * Results (figures and ratios against the targets) go to bench/results/.
 *
 * Usage: see USAGE below (`node bench/run.js --help`). Each scenario runs --rounds times
 * between runs of its baseline; figures and ratios are the medians.
 */
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { parseArgs } = require('node:util');
const Redis = require('ioredis');
const { connect } = require('nats');
const { Client } = require('pg');
const YAML = require('yaml');
const { deleteStreams } = require('../packages/platform/dist/nats');
const { deleteKeysWithPrefix } = require('../packages/platform/dist/redis');
const { freePort, waitGrpc, waitHttp } = require('../scripts/lib/wait');
const { forkReady, hasWrk, median, spawnService, stopAll, load: loadWith } = require('./lib');
// Services run with NODE_ENV=production, where the admin token must be at least 24 characters.
const BENCH_ADMIN_TOKEN = 'bench-admin-token-of-24-characters';
// NODE_ENV=production: at least 32 characters.
const BENCH_INTERNAL_TOKEN = 'bench-internal-token-of-32-characters';

const root = path.resolve(__dirname, '..');
const SCENARIOS = ['bulk', 'reads', 'pages', 'starts', 'launch'];
const USAGE = `Usage: node bench/run.js [--duration 5] [--rounds 5] [--connections 50] [--bulk-connections 2]
       [--only ${SCENARIOS.join(',')}] [--generator wrk|autocannon] [--log-level warn|info]
Needs \`npm run build\` first. Runs every scenario (about 10 minutes) unless --only picks some;
seconds per round (--duration), rounds, and connections are positive integers.`;

/** The command line, strictly: an unknown option or a bad value stops the run before it starts anything. */
function options() {
  const fail = (message) => {
    console.error(`${message}\n${USAGE}`);
    process.exit(2);
  };
  let values;
  try {
    ({ values } = parseArgs({
      strict: true,
      options: {
        duration: { type: 'string' },
        rounds: { type: 'string' },
        connections: { type: 'string' },
        'bulk-connections': { type: 'string' },
        only: { type: 'string' },
        generator: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    fail(err.message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const count = (name, def) => {
    if (values[name] === undefined) return def;
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer, not ${values[name]}`);
    return n;
  };
  const only = values.only === undefined ? null : values.only.split(',');
  const unknown = (only ?? []).filter((s) => !SCENARIOS.includes(s));
  if (unknown.length > 0) fail(`unknown scenario ${unknown.join(', ')} in --only`);
  if (values.generator !== undefined && !['wrk', 'autocannon'].includes(values.generator))
    fail(`unknown --generator ${values.generator}`);
  if (values['log-level'] !== undefined && !['warn', 'info'].includes(values['log-level']))
    fail(`unknown --log-level ${values['log-level']}`);
  return {
    duration: count('duration', 5),
    rounds: count('rounds', 5),
    connections: count('connections', 50),
    bulkConnections: count('bulk-connections', 2),
    only: only && new Set(only),
    generator: values.generator,
    logLevel: values['log-level'],
  };
}
const OPTIONS = options();
const DURATION = OPTIONS.duration;
const CONNECTIONS = OPTIONS.connections;
const BULK_CONNECTIONS = OPTIONS.bulkConnections;
const ROUNDS = OPTIONS.rounds;
// The services run as the chart runs them in production: its node flags, log level and access
// lines (`config.accessLog`, and a service's own `accessLog`). Until session 14 the bench ran
// them at warn, with no access lines at all; `--log-level warn` still does.
const CHART = YAML.parse(fs.readFileSync(path.join(root, 'deploy/helm/outreach/values.yaml'), 'utf8'));
const NODE_FLAGS = CHART.nodeFlags ?? [];
const LOG_LEVEL = OPTIONS.logLevel ?? CHART.config.logLevel;
const ACCESS_LOG = Object.fromEntries(
  Object.entries(CHART.services).map(([name, s]) => [name, s.accessLog ?? CHART.config.accessLog]),
);
// wrk (native, its own process) when installed: autocannon parses every response in JavaScript on
// the same two cores, and for the page it spends more per request than the server does.
const GENERATOR = OPTIONS.generator ?? (hasWrk() ? 'wrk' : 'autocannon');
// What every load is run with; main adds the names of the bench database's backends.
const loadOptions = { generator: GENERATOR };
const load = (opts) => loadWith({ ...loadOptions, ...opts });
const ONLY = OPTIONS.only;
const wanted = (name) => !ONLY || ONLY.has(name);

// What a phone's browser sends with a page request (Chrome's values).
const BROWSER_HEADERS = { 'accept-encoding': 'gzip, deflate, br, zstd', 'accept-language': 'en-US,en;q=0.9' };
const log = (...a) => console.log(new Date().toISOString().slice(11, 19), ...a);

async function freshDatabase() {
  const name = `outreach_bench_${Date.now()}`;
  const admin = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    url: `postgres://postgres@127.0.0.1:5432/${name}`,
    /** The database's backends by pid, each named by its client's application_name. */
    backendNames: async () => {
      const { rows } = await admin.query(
        "SELECT pid, application_name AS name FROM pg_stat_activity WHERE datname = $1 AND application_name <> ''",
        [name],
      );
      return new Map(rows.map((r) => [r.pid, r.name]));
    },
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Deletes what a run left in Redis (its key prefix) and NATS (its two streams). */
async function dropStoresOf(env) {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  await deleteKeysWithPrefix(redis, env.REDIS_PREFIX);
  await redis.quit();
  const nc = await connect({ servers: process.env.NATS_URL ?? '127.0.0.1:4222' });
  await deleteStreams(await nc.jetstreamManager(), env.NATS_PREFIX);
  await nc.close();
}

/** Median of numbers (the lower middle one for an even count). */
/** Each process's median CPU per request over the rounds (0 in a round where it used none). */
function medianByProcess(rounds) {
  const labels = new Set(rounds.flatMap((r) => Object.keys(r.cpuMicrosByProcess ?? {})));
  const rows = [...labels].map((label) => [
    label,
    median(rounds.map((r) => r.cpuMicrosByProcess?.[label] ?? 0)),
  ]);
  return Object.fromEntries(rows.filter(([, us]) => us > 0).sort((a, b) => b[1] - a[1]));
}

/** Figures of repeated runs: the median of each, the counts summed, every round kept. */
function summarize(rounds) {
  const sum = (k) => rounds.reduce((n, r) => n + r[k], 0);
  return {
    requestsPerSec: median(rounds.map((r) => r.requestsPerSec)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    total: sum('total'),
    cpuMicrosPerRequest: median(rounds.map((r) => r.cpuMicrosPerRequest)),
    cpuMicrosByProcess: medianByProcess(rounds),
    rounds: rounds.map((r) => ({
      requestsPerSec: r.requestsPerSec,
      p50: r.p50,
      p99: r.p99,
      cpuMicrosPerRequest: r.cpuMicrosPerRequest,
      cpuMicrosByProcess: r.cpuMicrosByProcess,
      stealPercent: r.stealPercent,
    })),
  };
}

/** Vacuums, analyzes and checkpoints the bench database so the next scenario starts settled. */
async function settle(url) {
  const c = new Client({ connectionString: url });
  await c.connect();
  await c.query('VACUUM (ANALYZE)');
  await c.query('CHECKPOINT');
  await c.end();
}

/**
 * Starts the same-page baseline with the bytes and headers the link runtime sends for `link`'s page
 * to a browser (all but those node:http adds itself), and returns its load run.
 */
async function samePageBaseline(children, link) {
  // node:http, not fetch, which would decode the body: the baseline sends the encoded bytes.
  const raw = await new Promise((resolve, reject) => {
    http
      .get(link, { headers: BROWSER_HEADERS }, (r) => {
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () =>
          resolve({ status: r.statusCode, headers: r.rawHeaders, body: Buffer.concat(chunks) }),
        );
      })
      .on('error', reject);
  });
  if (raw.status !== 200) throw new Error(`the bench link's page answered ${raw.status}`);
  const skip = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
  const headers = [];
  for (let i = 0; i < raw.headers.length; i += 2)
    if (!skip.has(raw.headers[i].toLowerCase())) headers.push(raw.headers[i], raw.headers[i + 1]);
  const port = await freePort();
  children.push(
    await forkReady(path.join(__dirname, 'baselines/same-page.js'), {
      PORT: String(port),
      PAGE_BASE64: raw.body.toString('base64'),
      PAGE_HEADERS: JSON.stringify(headers),
    }),
  );
  return () => {
    log('baseline: bare node:http sending the same page');
    return load({
      url: `http://127.0.0.1:${port}/`,
      headers: BROWSER_HEADERS,
      connections: CONNECTIONS,
      duration: DURATION,
    });
  };
}

async function baselines(children, dbUrl) {
  const httpPort = await freePort();
  children.push(await forkReady(path.join(__dirname, 'baselines/http-hello.js'), { PORT: String(httpPort) }));
  const durablePort = await freePort();
  children.push(
    await forkReady(path.join(__dirname, 'baselines/durable-insert.js'), {
      PORT: String(durablePort),
      DATABASE_URL: dbUrl,
    }),
  );
  const echoPort = await freePort();
  children.push(
    await forkReady(path.join(__dirname, 'baselines/grpc-echo-server.js'), { PORT: String(echoPort) }),
  );
  const koaPort = await freePort();
  children.push(
    await forkReady(path.join(__dirname, 'baselines/koa-grpc-echo.js'), {
      PORT: String(koaPort),
      ECHO_ADDR: `127.0.0.1:${echoPort}`,
    }),
  );
  // Each baseline runs right before the scenarios compared with it: this machine's speed
  // drifts by tens of percent over a minute, and adjacent runs keep the ratio honest.
  return {
    bare: () => {
      log('baseline: bare node:http');
      return load({ url: `http://127.0.0.1:${httpPort}/`, connections: CONNECTIONS, duration: DURATION });
    },
    durableInsert: () => {
      log('baseline: node:http answering after a durable PostgreSQL insert');
      return load({
        url: `http://127.0.0.1:${durablePort}/`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: DURATION,
      });
    },
    koaGrpc: (connections = CONNECTIONS) => {
      log(`baseline: Koa -> gRPC echo, ${connections} connection(s)`);
      return load({ url: `http://127.0.0.1:${koaPort}/echo/x`, connections, duration: DURATION });
    },
  };
}

async function startSystem(children, dbUrl) {
  const ports = {};
  for (const k of ['gateway', 'link', 'dashboard', 'campaignGrpc', 'recipientGrpc'])
    ports[k] = await freePort();
  const suffix = Date.now().toString(36);
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    INTERNAL_TOKEN: BENCH_INTERNAL_TOKEN,
    DATABASE_URL: dbUrl,
    DATABASE_POOL_SIZE: '20',
    REDIS_PREFIX: `bench:${suffix}:`,
    NATS_PREFIX: `bench${suffix}`,
    HOST: '127.0.0.1',
    GATEWAY_PORT: String(ports.gateway),
    LINK_PORT: String(ports.link),
    DASHBOARD_PORT: String(ports.dashboard),
    CAMPAIGN_GRPC_PORT: String(ports.campaignGrpc),
    RECIPIENT_GRPC_PORT: String(ports.recipientGrpc),
    CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${ports.campaignGrpc}`,
    RECIPIENT_SERVICE_ADDR: `127.0.0.1:${ports.recipientGrpc}`,
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.link}`,
  };
  const main = (s) => [...NODE_FLAGS, path.join(root, s, 'dist/main.js')];
  const service = (name, ready) =>
    spawnService(name, main(name), { ...env, ACCESS_LOG: ACCESS_LOG[name] }, ready);
  const started = [
    service('campaign-service', () => waitHttp(`http://127.0.0.1:${ports.dashboard}/readyz`)),
    service('recipient-service', () => waitGrpc(`127.0.0.1:${ports.recipientGrpc}`)),
    service('link-runtime', () => waitHttp(`http://127.0.0.1:${ports.link}/readyz`)),
    service('gateway', () => waitHttp(`http://127.0.0.1:${ports.gateway}/readyz`)),
  ];
  children.push(...started);
  await Promise.all(started.map((c) => c.ready));
  return { env, ports, natsPrefix: env.NATS_PREFIX };
}

async function adminCall(ports, method, p, body) {
  const res = await fetch(`http://127.0.0.1:${ports.dashboard}/admin/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function seed(ports) {
  const project = await adminCall(ports, 'POST', '/projects', { name: 'bench' });
  const p = `/projects/${project.id}`;
  const device = await adminCall(ports, 'POST', `${p}/devices`, { name: 'bench' });
  const key = await adminCall(ports, 'POST', `${p}/api-keys`, {
    name: 'bench',
    scopes: ['recipients:read', 'recipients:write'],
    rateLimitPerMinute: 1_000_000,
  });
  const campaign = (startInMs) =>
    adminCall(ports, 'POST', `${p}/campaigns`, {
      name: 'bench',
      deviceId: device.id,
      startDate: new Date(Date.now() + startInMs).toISOString(),
      endDate: new Date(Date.now() + 86400_000).toISOString(),
      budgetMode: 'metered',
    });
  return { projectId: project.id, key: key.key, campaign, p };
}

async function main() {
  log(`load generator: ${GENERATOR}`);
  log(`services' node flags: ${NODE_FLAGS.join(' ') || '(none)'}`);
  log(
    `services' log level: ${LOG_LEVEL}; access lines: ${Object.entries(ACCESS_LOG)
      .map(([name, mode]) => `${name} ${mode}`)
      .join(', ')}`,
  );
  if (GENERATOR === 'autocannon' && OPTIONS.generator === undefined)
    log(
      'wrk is not installed (apt-get install wrk): autocannon runs in this process and competes with what it measures; its figures are not comparable with runs made with wrk',
    );
  const children = [];
  const db = await freshDatabase();
  loadOptions.backendNames = db.backendNames;
  const cleanups = [];
  // Ctrl-C, a kill, or a reader that went away (`| head`) must not leave the services running
  // and the run's database, keys and streams behind.
  let tornDown;
  const teardown = () => {
    tornDown ??= (async () => {
      await stopAll(children);
      await db.drop().catch(() => undefined);
      for (const cleanup of cleanups)
        await cleanup().catch((err) => console.error('cleanup failed:', err.message));
    })();
    return tornDown;
  };
  const abort = (why) => {
    console.error(`bench: ${why}; stopping the services and dropping what the run made`);
    void teardown().finally(() => process.exit(130));
  };
  process.once('SIGINT', () => abort('interrupted'));
  process.once('SIGTERM', () => abort('terminated'));
  process.stdout.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err;
    abort('its output was closed');
  });
  const results = {
    machine: { cpus: require('node:os').cpus().length, node: process.version },
    loadGenerator: GENERATOR,
    serviceNodeFlags: NODE_FLAGS,
    logLevel: LOG_LEVEL,
    accessLog: ACCESS_LOG,
    durationSeconds: DURATION,
    rounds: ROUNDS,
    connections: CONNECTIONS,
  };
  try {
    const baseline = await baselines(children, db.url);
    const base = {};
    results.baselines = base;
    const system = await startSystem(children, db.url);
    const { ports } = system;
    cleanups.push(() => dropStoresOf(system.env));
    const s = await seed(ports);
    const gw = `http://127.0.0.1:${ports.gateway}/api/v1/projects/${s.projectId}`;
    const auth = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' };
    /** Creates 1,000 recipients in `campaignId` through the API, five batches of 200. */
    const thousandRecipients = async (campaignId, what) => {
      const recipients = [];
      for (let batch = 0; batch < 5; batch++) {
        const created = await (
          await fetch(`${gw}/recipients`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ campaignId, items: Array.from({ length: 200 }, () => ({})) }),
          })
        ).json();
        if (!created.results) throw new Error(`creating the ${what} failed: ${JSON.stringify(created)}`);
        recipients.push(...created.results);
      }
      return recipients;
    };

    // Bulk create: each request a fresh 200-item batch into a draft campaign without cap.
    const draft = await s.campaign(3600_000);
    const items = Array.from({ length: 200 }, (_, i) => ({
      label: `Customer ${i}`,
      metadata: { n: String(i) },
    }));
    const createBody = JSON.stringify({ campaignId: draft.id, items });
    const bulkRounds = [];
    for (let round = 1; wanted('bulk') && round <= ROUNDS; round++) {
      log(
        `gateway: bulk create, 200-item batches, ${BULK_CONNECTIONS} connections (round ${round}/${ROUNDS})`,
      );
      bulkRounds.push(
        await load({
          url: `${gw}/recipients`,
          method: 'POST',
          headers: auth,
          body: createBody,
          connections: BULK_CONNECTIONS,
          duration: DURATION,
        }),
      );
    }
    if (wanted('bulk')) {
      const bulk = summarize(bulkRounds);
      results.bulkCreate = {
        ...bulk,
        connections: BULK_CONNECTIONS,
        recipientsPerSec: bulk.requestsPerSec * 200,
      };
      // The bulk scenario leaves PostgreSQL with autovacuum and a checkpoint due for the rows
      // it wrote; doing both now measures the reads against a settled database, not that backlog.
      await settle(db.url);
    }

    // Reads of one recipient each, going through 1,000 recipients in turn: one hot row would
    // flatter reads that arrive together (they ask for the same id once).
    const readTarget = await s.campaign(3600_000);
    const readIds = (await thousandRecipients(readTarget.id, 'read targets')).map((r) => r.id);
    const readPaths = readIds.map((id) => `${new URL(gw).pathname}/recipients/${id}`);
    const readLoad = (connections) =>
      load({
        url: `${gw}/recipients/${readIds[0]}`,
        paths: readPaths,
        headers: auth,
        connections,
        duration: DURATION,
      });
    const readRounds = { koaGrpc: [], reads: [] };
    for (let round = 1; wanted('reads') && round <= ROUNDS; round++) {
      readRounds.koaGrpc.push(await baseline.koaGrpc());
      log(`gateway: single-recipient reads (round ${round}/${ROUNDS})`);
      readRounds.reads.push(await readLoad(CONNECTIONS));
    }
    // One more baseline after the last round, so that every round lies between two of them.
    if (readRounds.reads.length) readRounds.koaGrpc.push(await baseline.koaGrpc());
    // The same with one connection: no two reads arrive together, so none shares a gRPC call, and
    // the ratio shows what auth, rate limit and the PostgreSQL read add to one unshared hop.
    const aloneRounds = { koaGrpc: [], reads: [] };
    for (let round = 1; wanted('reads') && round <= ROUNDS; round++) {
      aloneRounds.koaGrpc.push(await baseline.koaGrpc(1));
      log(`gateway: single-recipient reads, one connection (round ${round}/${ROUNDS})`);
      aloneRounds.reads.push(await readLoad(1));
    }
    if (aloneRounds.reads.length) aloneRounds.koaGrpc.push(await baseline.koaGrpc(1));

    // Link runtime: an active campaign with an unlimited recipient, and one with a lifetime cap
    // it never reaches (so each of its page views asks the counters, as most customers' links do).
    const live = await s.campaign(1500);
    const lr = await (
      await fetch(`${gw}/recipients`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ campaignId: live.id, items: [{}, { maxTotalInteractions: 1_000_000_000 }] }),
      })
    ).json();
    await adminCall(ports, 'POST', `${s.p}/campaigns/${live.id}/launch`);
    const link = lr.results[0].link;
    const cappedLink = lr.results[1].link;
    // Starts spread over 1,000 recipients of the campaign in turn, as customers open their own
    // links: a write's conversations then belong to many recipients, not one.
    const spreadPaths = wanted('starts')
      ? (await thousandRecipients(live.id, 'spread links')).map(
          (r) => `${new URL(r.link).pathname}/conversations`,
        )
      : [];
    for (let i = 0; i < 100; i++) {
      if ((await fetch(`${link}/conversations`, { method: 'POST' })).status === 201) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const linkRounds = {
      bare: [],
      samePage: [],
      durableInsert: [],
      pageLoads: [],
      pageLoadsCapped: [],
      starts: [],
      startsSpread: [],
    };
    const samePage = wanted('pages') ? await samePageBaseline(children, link) : undefined;
    for (let round = 1; (wanted('pages') || wanted('starts')) && round <= ROUNDS; round++) {
      linkRounds.bare.push(await baseline.bare());
      // What answering after a durable write costs at the least, whatever else a start does.
      if (wanted('starts')) linkRounds.durableInsert.push(await baseline.durableInsert());
      if (samePage) {
        // What sending the page's own bytes costs at the least, whatever else a page view does.
        linkRounds.samePage.push(await samePage());
        log(`link runtime: page loads (round ${round}/${ROUNDS})`);
        linkRounds.pageLoads.push(
          await load({ url: link, headers: BROWSER_HEADERS, connections: CONNECTIONS, duration: DURATION }),
        );
        log(`link runtime: page loads of a capped link (round ${round}/${ROUNDS})`);
        linkRounds.pageLoadsCapped.push(
          await load({
            url: cappedLink,
            headers: BROWSER_HEADERS,
            connections: CONNECTIONS,
            duration: DURATION,
          }),
        );
      }
      if (wanted('starts')) {
        log(`link runtime: conversation starts (round ${round}/${ROUNDS})`);
        linkRounds.starts.push(
          await load({
            url: `${link}/conversations`,
            method: 'POST',
            connections: CONNECTIONS,
            duration: DURATION,
          }),
        );
        log(`link runtime: conversation starts over 1,000 links (round ${round}/${ROUNDS})`);
        linkRounds.startsSpread.push(
          await load({
            url: link,
            paths: spreadPaths,
            method: 'POST',
            connections: CONNECTIONS,
            duration: DURATION,
          }),
        );
      }
    }
    // A campaign's launch: every customer opens a link no process has seen yet, then starts a
    // conversation. Each round makes 1,000 fresh links (not timed), loads each page once (the
    // link's first lookup), starts one conversation at each (its counters' first seeding), then
    // does both once more: the same requests at the same pace with nothing to look up or seed, so
    // the difference is what being first costs.
    const phases = {
      firstPageLoads: 'pages',
      firstStarts: 'starts',
      pageLoadsAgain: 'pages',
      startsAgain: 'starts',
    };
    const launchRounds = Object.fromEntries(Object.keys(phases).map((phase) => [phase, []]));
    for (let round = 1; wanted('launch') && round <= ROUNDS; round++) {
      // A campaign of its own: recipients can only be added before it is active.
      const startsAt = Date.now() + 3000;
      const launched = await s.campaign(startsAt - Date.now());
      const fresh = await thousandRecipients(launched.id, 'launch links');
      await adminCall(ports, 'POST', `${s.p}/campaigns/${launched.id}/launch`);
      const pages = fresh.map((r) => new URL(r.link).pathname);
      const requests = {
        pages: { paths: pages, headers: BROWSER_HEADERS },
        starts: { paths: pages.map((p) => `${p}/conversations`), method: 'POST' },
      };
      // Past its start, and the writes and events of what ran before have settled, so the round
      // counts only its own work.
      await new Promise((r) => setTimeout(r, Math.max(1000, startsAt + 1000 - Date.now())));
      for (const [phase, kind] of Object.entries(phases)) {
        log(`link runtime: launch, ${phase} at 1,000 links (round ${round}/${ROUNDS})`);
        const request = requests[kind];
        launchRounds[phase].push(
          await load({ generator: 'each-once', url: link, connections: CONNECTIONS, ...request }),
        );
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    if (launchRounds.firstStarts.length)
      results.launch = Object.fromEntries(
        Object.keys(phases).map((phase) => [phase, summarize(launchRounds[phase])]),
      );
    if (linkRounds.bare.length) linkRounds.bare.push(await baseline.bare());
    if (linkRounds.durableInsert.length) linkRounds.durableInsert.push(await baseline.durableInsert());
    if (samePage) linkRounds.samePage.push(await samePage());

    if (readRounds.reads.length) {
      base.koaGrpc = summarize(readRounds.koaGrpc);
      results.reads = summarize(readRounds.reads);
      base.koaGrpcOneConnection = summarize(aloneRounds.koaGrpc);
      results.readsOneConnection = summarize(aloneRounds.reads);
    }
    if (linkRounds.bare.length) base.bare = summarize(linkRounds.bare);
    if (linkRounds.durableInsert.length) base.durableInsert = summarize(linkRounds.durableInsert);
    if (linkRounds.samePage.length) base.samePage = summarize(linkRounds.samePage);
    if (linkRounds.pageLoads.length) results.pageLoads = summarize(linkRounds.pageLoads);
    if (linkRounds.pageLoadsCapped.length) results.pageLoadsCapped = summarize(linkRounds.pageLoadsCapped);
    if (linkRounds.starts.length) results.starts = summarize(linkRounds.starts);
    if (linkRounds.startsSpread.length) results.startsSpread = summarize(linkRounds.startsSpread);
    // A ratio is the median of the per-round ratios, each round against the mean of the baselines
    // run just before and just after it: the machine's speed drifts, and bracketing a round
    // cancels a steady drift and halves the weight of one unlucky baseline.
    const ratio = (xs, bases) =>
      xs.length
        ? Math.round(
            median(
              xs.map(
                (x, i) => x.requestsPerSec / ((bases[i].requestsPerSec + bases[i + 1].requestsPerSec) / 2),
              ),
            ) * 1000,
          ) / 1000
        : undefined;
    const { reads, readsOneConnection, starts, pageLoads, bulkCreate } = results;
    results.ratios = {
      readsVsKoaGrpc: ratio(readRounds.reads, readRounds.koaGrpc),
      readsVsKoaGrpcOneConnection: ratio(aloneRounds.reads, aloneRounds.koaGrpc),
      startsVsBare: ratio(linkRounds.starts, linkRounds.bare),
      startsSpreadVsBare: ratio(linkRounds.startsSpread, linkRounds.bare),
      pageLoadsVsBare: ratio(linkRounds.pageLoads, linkRounds.bare),
      // No target: the part of a page view's cost that is the link runtime's own work.
      pageLoadsVsSamePage: ratio(linkRounds.pageLoads, linkRounds.samePage),
      // No target either: a page view that asks the counters in Redis, against the same bare server
      // as page loads (its round ran right after theirs, between the same two bare runs).
      pageLoadsCappedVsBare: ratio(linkRounds.pageLoadsCapped, linkRounds.bare),
      // Each durable-insert round ran between two bare ones, each start round between two of its.
      durableInsertVsBare: ratio(linkRounds.durableInsert.slice(0, -1), linkRounds.bare),
      startsVsDurableInsert: ratio(linkRounds.starts, linkRounds.durableInsert),
    };
    const perScenario = (pick) => ({
      bulkCreateBatch: pick(bulkCreate),
      reads: pick(reads),
      koaGrpc: pick(base.koaGrpc),
      readsOneConnection: pick(readsOneConnection),
      koaGrpcOneConnection: pick(base.koaGrpcOneConnection),
      pageLoads: pick(pageLoads),
      pageLoadsCapped: pick(results.pageLoadsCapped),
      starts: pick(starts),
      startsSpread: pick(results.startsSpread),
      bare: pick(base.bare),
      samePage: pick(base.samePage),
      durableInsert: pick(base.durableInsert),
      launchFirstPageLoads: pick(results.launch?.firstPageLoads),
      launchPageLoadsAgain: pick(results.launch?.pageLoadsAgain),
      launchFirstStarts: pick(results.launch?.firstStarts),
      launchStartsAgain: pick(results.launch?.startsAgain),
    });
    // What one request costs the whole machine, next to its baseline's: steadier than requests/s;
    // and the same split by process (services, stores, load generator): where it goes.
    results.cpuMicrosPerRequest = perScenario((r) => r?.cpuMicrosPerRequest ?? undefined);
    results.cpuMicrosByProcess = perScenario((r) => r?.cpuMicrosByProcess ?? undefined);
    const target = (present, ok) => (present ? ok : 'not measured');
    results.targets = {
      'bulk create >= 20,000 recipients/s': target(bulkCreate, bulkCreate?.recipientsPerSec >= 20000),
      'bulk create p50 < 25 ms per batch': target(bulkCreate, bulkCreate?.p50 < 25),
      'reads >= 80% of Koa->gRPC echo': target(reads, results.ratios.readsVsKoaGrpc >= 0.8),
      'starts >= 35% of bare node:http': target(starts, results.ratios.startsVsBare >= 0.35),
      'page loads >= 50% of bare node:http': target(pageLoads, results.ratios.pageLoadsVsBare >= 0.5),
      'starts p99 < 20 ms at 50 connections': target(starts, starts?.p99 < 20),
      'page loads p99 < 20 ms at 50 connections': target(pageLoads, pageLoads?.p99 < 20),
    };
  } finally {
    await teardown();
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', `${stamp}.json`), `${JSON.stringify(results, null, 2)}\n`);
  fs.writeFileSync(path.join(__dirname, 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  const { ratios, cpuMicrosPerRequest, cpuMicrosByProcess, targets } = results;
  console.log(JSON.stringify({ ratios, cpuMicrosPerRequest, cpuMicrosByProcess, targets }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
