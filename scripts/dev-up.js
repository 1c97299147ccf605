#!/usr/bin/env node
// Starts every service as a child process, waits until each is ready, seeds a demo project
// (device, campaign, API key, one recipient link) and prints how to use it. Ctrl-C stops all.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { waitForPorts, waitGrpc, waitHttp } = require('./lib/wait');

const root = path.resolve(__dirname, '..');
const logDir = path.join(root, '.dev/logs');
fs.mkdirSync(logDir, { recursive: true });

const env = {
  NODE_ENV: 'development',
  GATEWAY_PORT: '8080',
  LINK_PORT: '8081',
  DASHBOARD_PORT: '8082',
  CAMPAIGN_GRPC_PORT: '50052',
  RECIPIENT_GRPC_PORT: '50051',
  ADMIN_TOKEN: 'dev-admin-token',
  // Every gRPC call between the services carries it, and their gRPC ports require it.
  INTERNAL_TOKEN: 'dev-internal-token',
  // This machine only: the admin token, the internal token and the demo sign-in are published
  // here and in the README. HOST=0.0.0.0 opens every service to the network.
  HOST: '127.0.0.1',
  ...process.env,
};
// The services find each other, and links point, at the ports above, moved or not, unless told otherwise.
env.RECIPIENT_SERVICE_ADDR ??= `127.0.0.1:${env.RECIPIENT_GRPC_PORT}`;
env.CAMPAIGN_SERVICE_ADDR ??= `127.0.0.1:${env.CAMPAIGN_GRPC_PORT}`;
env.PUBLIC_BASE_URL ??= `http://localhost:${env.LINK_PORT}`;
const url = (port) => `http://127.0.0.1:${port}`;
const services = [
  { name: 'campaign-service', ready: () => waitHttp(`${url(env.DASHBOARD_PORT)}/readyz`) },
  { name: 'recipient-service', ready: () => waitGrpc(`127.0.0.1:${env.RECIPIENT_GRPC_PORT}`) },
  { name: 'link-runtime', ready: () => waitHttp(`${url(env.LINK_PORT)}/readyz`) },
  { name: 'gateway', ready: () => waitHttp(`${url(env.GATEWAY_PORT)}/readyz`) },
];
const children = [];

// The ports the services listen on, by the variable that sets each.
const PORT_VARS = [
  'GATEWAY_PORT',
  'LINK_PORT',
  'DASHBOARD_PORT',
  'CAMPAIGN_GRPC_PORT',
  'RECIPIENT_GRPC_PORT',
];

function startService({ name }) {
  const log = fs.openSync(path.join(logDir, `${name}.log`), 'a');
  const child = spawn(
    process.execPath,
    ['--require', '@outreach/platform/dist/instrumentation.js', path.join(root, name, 'dist/main.js')],
    { cwd: root, env: { ...env, OTEL_SERVICE_NAME: name }, stdio: ['ignore', log, log] },
  );
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); see .dev/logs/${name}.log`);
      shutdown(1);
    }
  });
  children.push(child);
}

async function admin(method, p, body) {
  const res = await fetch(`${url(env.DASHBOARD_PORT)}/admin/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => undefined);
  if (res.status >= 400) throw new Error(`${method} ${p} -> ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// The demo link's limits, shown with it: it demonstrates them without getting in the way at once.
const DEMO_LIMITS = { maxTotalInteractions: 20, maxInteractionsPerWindow: 5, windowSeconds: 3600 };

/** Adds the demo recipient to a new campaign and returns its link. */
async function addDemoRecipient(p, campaignId) {
  const created = await admin('POST', `${p}/campaigns/${campaignId}/recipients`, {
    items: [
      {
        externalId: 'demo-customer@example.com',
        label: 'Dana',
        metadata: { plan: 'gold' },
        injectionInstructions: 'Greet {name} by name and mention the {meta.plan} plan.',
        ...DEMO_LIMITS,
      },
    ],
  });
  return created.results?.[0]?.link;
}

/** Seeds (or reuses) the demo project; a new API key is made on every start since keys are shown once. */
async function seed() {
  const projects = await admin('GET', '/projects');
  let project = (projects.projects ?? projects).find((p) => p.name === 'Demo');
  project ??= await admin('POST', '/projects', { name: 'Demo' });
  const p = `/projects/${project.id}`;
  const devices = await admin('GET', `${p}/devices`);
  let device = (devices.devices ?? devices).find((d) => d.name === 'Demo assistant');
  device ??= await admin('POST', `${p}/devices`, {
    name: 'Demo assistant',
    languages: ['en', 'de'],
    defaultLanguage: 'en',
    styling: { title: 'Outreach demo', primaryColor: '#2457d6' },
    persona: 'You are a friendly assistant for Example Co.',
    customInstructions: 'Keep answers short.',
    knowledge: [{ title: 'Opening hours', content: 'We are open Monday to Friday, 9:00 to 17:00.' }],
  });
  // Each conversation (the first message after the page is opened) uses the link up a little:
  // reuse a demo campaign whose link has conversations left, else start a new one (recipients
  // cannot be added to a campaign once it is active).
  const campaigns = await admin('GET', `${p}/campaigns`);
  let campaign;
  let link;
  for (const c of campaigns.campaigns ?? campaigns) {
    if (c.name !== 'Demo campaign' || c.state === 'completed') continue;
    const list = await admin('GET', `${p}/campaigns/${c.id}/recipients?limit=1`);
    const r = list.recipients?.[0];
    // Conversations left in all is not enough: the hour's may be used up (a cooldown), and the
    // page answers as a start would.
    const open = r?.isActive && r.interactionCount < DEMO_LIMITS.maxTotalInteractions;
    if (
      open &&
      (await fetch(r.link).then(
        (res) => res.status === 200,
        () => false,
      ))
    ) {
      campaign = c;
      link = r.link;
      break;
    }
  }
  if (!campaign) {
    const start = new Date(Date.now() + 3000);
    campaign = await admin('POST', `${p}/campaigns`, {
      name: 'Demo campaign',
      deviceId: device.id,
      startDate: start.toISOString(),
      endDate: new Date(Date.now() + 30 * 86400_000).toISOString(),
      budgetMode: 'metered',
      pricePerConversation: 25,
    });
    await admin('POST', `${p}/campaigns/${campaign.id}/top-offs`, { conversations: 1000 });
    link = await addDemoRecipient(p, campaign.id);
    await admin('POST', `${p}/campaigns/${campaign.id}/launch`);
  }
  // The API writes recipients only into a campaign not yet live: one draft to try them on.
  const draft =
    (campaigns.campaigns ?? campaigns).find((c) => c.name === 'Demo draft' && c.state === 'draft') ??
    (await admin('POST', `${p}/campaigns`, {
      name: 'Demo draft',
      deviceId: device.id,
      startDate: new Date(Date.now() + 30 * 86400_000).toISOString(),
      endDate: new Date(Date.now() + 60 * 86400_000).toISOString(),
      budgetMode: 'metered',
    }));
  const operator = { email: 'operator@example.com', password: 'outreach-demo-password' };
  const { createOperatorFromEnv } = require(
    path.join(root, 'campaign-service/dist/dashboard/create-operator.js'),
  );
  await createOperatorFromEnv({ ...env, LOG_LEVEL: 'warn' }, { ...operator, projectIds: [project.id] });
  const key = await admin('POST', `${p}/api-keys`, {
    name: `demo key ${new Date().toISOString()}`,
    scopes: ['recipients:read', 'recipients:write'],
  });
  return { project, campaign, draft, key, link, operator };
}

let stopping = false;
async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  for (const c of [...children].reverse()) c.kill('SIGTERM');
  await Promise.all(
    children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)),
  );
  process.exit(code);
}
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));

(async () => {
  await waitForPorts(
    PORT_VARS.map((name) => ({ name, port: Number(env[name]) })),
    { host: env.HOST },
  );
  // Start all first: a service's readiness may depend on another being up.
  for (const s of services) startService(s);
  await Promise.all(
    services.map((s) =>
      s.ready().catch((err) => {
        throw new Error(`${s.name}: ${err.message}; see .dev/logs/${s.name}.log`);
      }),
    ),
  );
  const { project, campaign, draft, key, link, operator } = await seed();
  const api = `${url(env.GATEWAY_PORT)}/api/v1/projects/${project.id}`;
  console.log(`
Outreach is running (logs in .dev/logs/):
  API gateway      ${url(env.GATEWAY_PORT)}/api/v1   (OpenAPI: /api/v1/openapi.json)
  Links            ${env.PUBLIC_BASE_URL}/i/<token>
  Dashboard        ${url(env.DASHBOARD_PORT)}/        sign in as ${operator.email} / ${operator.password}
  Admin API        ${url(env.DASHBOARD_PORT)}/admin/v1 (Authorization: Bearer ${env.ADMIN_TOKEN}; routes in campaign-service/README.md)

Demo project ${project.id}
  campaign ${campaign.id}, active (live a few seconds after the first start), with the sample link
  campaign ${draft.id}, a draft: the API adds recipients only to campaigns not yet live
API key (shown once): ${key.key}
Sample link: ${link ?? '(none)'}
  (opening it costs nothing; each conversation, started by its first message, counts: ${DEMO_LIMITS.maxInteractionsPerWindow} an hour, ${DEMO_LIMITS.maxTotalInteractions} in all; the next npm start gives a new link once it is used up)

Try:
  curl -s -H "Authorization: Bearer ${key.key}" ${api}/campaigns
  curl -s -H "Authorization: Bearer ${key.key}" -H "Content-Type: application/json" \\
    -d '{"campaignId":"${draft.id}","items":[{"label":"Ada","injectionInstructions":"Greet {label}."}]}' ${api}/recipients

Press Ctrl-C to stop.`);
})().catch((err) => {
  console.error(err.message);
  shutdown(1);
});
