#!/usr/bin/env node
// Docker cannot run on the build machines, so this checks the structure of the Dockerfile,
// .dockerignore and docker-compose.yaml instead: what `docker build` / `docker compose up`
// would trip over first. Prints `ok <name>` / `not ok <name>` per check; exits 1 on a failure.

const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');
const { createChecks } = require('../../scripts/lib/checks');

const root = path.resolve(__dirname, '../..');
const read = (f) => fs.readFileSync(path.join(root, f), 'utf8');
const SERVICES = ['gateway', 'link-runtime', 'campaign-service', 'recipient-service'];
const { check, report } = createChecks();

// ---- Dockerfile -----------------------------------------------------------------------------
{
  const problems = [];
  const text = read('Dockerfile').replace(/\\\n/g, ' ');
  const lines = text.split('\n').map((l) => l.trim());
  const instr = lines.filter((l) => l && !l.startsWith('#'));
  const has = (re, what) => instr.some((l) => re.test(l)) || problems.push(`missing ${what}`);
  has(/^ARG NODE_IMAGE=node:20-slim$/, 'ARG NODE_IMAGE=node:20-slim');
  has(/^FROM \$\{NODE_IMAGE\} AS build$/, 'a build stage on node:20-slim');
  has(/^FROM \$\{NODE_IMAGE\} AS runtime$/, 'a runtime stage on node:20-slim');
  has(/^ARG SERVICE$/, 'ARG SERVICE');
  has(/^RUN npm ci$/, 'RUN npm ci');
  has(/npx tsc -b/, 'npx tsc -b');
  has(/npm prune --omit=dev/, 'npm prune --omit=dev');
  const users = instr.filter((l) => l.startsWith('USER '));
  if (users.length === 0 || !/^USER [1-9][0-9]*(:[0-9]+)?$/.test(users.at(-1)))
    problems.push('the runtime stage must end with a numeric non-root USER');
  // Every path the build stage copies from the context must exist and survive .dockerignore.
  const ignore = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const ignored = (p) =>
    ignore.some((pat) => {
      const re = new RegExp(
        `^${pat
          .replace(/[.+^${}()|[\]]/g, '\\$&')
          .replace(/\*\*\//g, '(.*/)?')
          .replace(/\*/g, '[^/]*')}(/.*)?$`,
      );
      return re.test(p);
    });
  for (const l of instr.filter((x) => x.startsWith('COPY ') && !x.includes('--from='))) {
    const parts = l.split(/\s+/).slice(1);
    for (const src of parts.slice(0, -1)) {
      if (!fs.existsSync(path.join(root, src))) problems.push(`COPY source ${src} does not exist`);
      else if (ignored(src)) problems.push(`COPY source ${src} is excluded by .dockerignore`);
    }
  }
  for (const need of ['protos', 'packages', 'scripts', 'package-lock.json'])
    if (ignored(need)) problems.push(`.dockerignore excludes ${need}, which the build needs`);
  for (const must of ['node_modules', 'gateway/node_modules', 'gateway/dist', '.git'])
    if (!ignored(must)) problems.push(`.dockerignore lets ${must} into the build context`);
  if (!/instrumentation\.js/.test(text) || !/scripts\/migrate\.js/.test(text))
    problems.push('CMD must start services with the instrumentation preload and SERVICE=all with migrate.js');
  // Compose runs the image's CMD, Kubernetes the chart's args: both start node with the same flags.
  const { nodeFlags = [] } = YAML.parse(read('deploy/helm/outreach/values.yaml'));
  const start = ['exec node', ...nodeFlags, '--require'].join(' ');
  if (!text.includes(start))
    problems.push(`CMD must start services with the chart's nodeFlags: expected "${start}"`);
  check(
    "Dockerfile: node:20-slim multi-stage, npm ci, tsc -b, prune, non-root, context paths exist, the chart's node flags",
    problems,
  );
}

// ---- docker-compose.yaml ----------------------------------------------------------------------
{
  const problems = [];
  let doc;
  try {
    const parsed = YAML.parseDocument(read('docker-compose.yaml'), { merge: true });
    if (parsed.errors.length > 0) throw new Error(parsed.errors.map((e) => e.message).join('; '));
    doc = parsed.toJS({ maxAliasCount: 100 });
  } catch (err) {
    problems.push(`does not parse: ${err.message}`);
  }
  if (doc) {
    const services = doc.services ?? {};
    for (const s of ['postgres', 'redis', 'nats', 'migrate', ...SERVICES])
      if (!services[s]) problems.push(`no service ${s}`);
    const nats = services.nats ?? {};
    if (!(nats.command ?? []).includes('-js')) problems.push('nats does not run with -js (JetStream)');
    const migrate = services.migrate ?? {};
    if ((migrate.command ?? []).join(' ') !== 'node scripts/migrate.js')
      problems.push('migrate does not run node scripts/migrate.js');
    if (migrate.restart !== 'no') problems.push('migrate must be a one-shot (restart: "no")');
    if (migrate.build?.args?.SERVICE !== 'all') problems.push('migrate must build with SERVICE=all');
    const required = [
      'DATABASE_URL',
      'REDIS_URL',
      'NATS_URL',
      'NATS_PREFIX',
      'REDIS_PREFIX',
      'PUBLIC_BASE_URL',
      'ADMIN_TOKEN',
      'INTERNAL_TOKEN',
      'RECIPIENT_SERVICE_ADDR',
      'CAMPAIGN_SERVICE_ADDR',
      'METRICS_PORT',
      'NODE_ENV',
    ];
    for (const s of SERVICES) {
      const svc = services[s];
      if (!svc) continue;
      if (svc.build?.args?.SERVICE !== s) problems.push(`${s} does not build with SERVICE=${s}`);
      const env = svc.environment ?? {};
      for (const v of required) if (!(v in env)) problems.push(`${s} lacks ${v}`);
      if (env.OTEL_SERVICE_NAME !== s) problems.push(`${s}: OTEL_SERVICE_NAME is ${env.OTEL_SERVICE_NAME}`);
      if (svc.depends_on?.migrate?.condition !== 'service_completed_successfully')
        problems.push(`${s} does not wait for the migration to complete`);
      if (svc.read_only !== true) problems.push(`${s} does not run with a read-only root filesystem`);
      if (!/^[1-9][0-9]*:[0-9]+$/.test(String(svc.user ?? '')))
        problems.push(`${s} does not run as non-root`);
    }
    for (const [name, svc] of Object.entries(services)) {
      for (const dep of Object.keys(svc.depends_on ?? {}))
        if (!services[dep]) problems.push(`${name} depends on unknown service ${dep}`);
    }
    for (const [name, svc] of Object.entries(services)) {
      for (const v of Object.keys(svc.volumes ?? {}).length ? svc.volumes : []) {
        const vol = String(v).split(':')[0];
        if (!vol.startsWith('.') && !vol.startsWith('/') && !(vol in (doc.volumes ?? {})))
          problems.push(`${name} mounts undeclared volume ${vol}`);
      }
    }
    const addr = (s) => services.gateway?.environment?.[s];
    if (addr('RECIPIENT_SERVICE_ADDR') !== 'recipient-service:50051')
      problems.push('RECIPIENT_SERVICE_ADDR must be recipient-service:50051');
    if (addr('CAMPAIGN_SERVICE_ADDR') !== 'campaign-service:50052')
      problems.push('CAMPAIGN_SERVICE_ADDR must be campaign-service:50052');
  }
  check(
    'docker-compose.yaml: stores, NATS with JetStream, migration one-shot, four services wired',
    problems,
  );
}

report();
