/**
 * The whole system with every gRPC call between the services over mutual TLS (GRPC_TLS_*): the
 * API, the admin API's recipient views and the link pages all reach the recipient and campaign
 * services through it, each caller presenting its certificate, which bears a name the servers
 * serve, and every service exports when the certificates it serves and presents expire. Then the same midway through a rollout that turns TLS on: servers taking
 * both, callers speaking either.
 */
import path from 'node:path';
import { createProject, eventually, type ProjectFixture } from './support/fixtures';
import { scrape, sum } from './support/prometheus';
import { http, startSystem, type TestSystem } from './support/system';

// TEST-ONLY certificates (scripts/make-test-certs.sh), for 127.0.0.1.
const TLS = path.resolve(__dirname, 'fixtures/tls');
const SERVER_TLS = {
  GRPC_TLS_CERT_FILE: path.join(TLS, 'server.crt'),
  GRPC_TLS_KEY_FILE: path.join(TLS, 'server.key'),
};
const CALLS_TLS = { GRPC_TLS_CA_FILE: path.join(TLS, 'ca.crt') };
// Mutual TLS: every caller presents the certificate, and the servers require one of the CA
// bearing a name they serve (the fixture's, localhost, stands for every caller's own).
const MUTUAL_TLS = {
  GRPC_TLS_CLIENT_CERT_FILE: path.join(TLS, 'server.crt'),
  GRPC_TLS_CLIENT_KEY_FILE: path.join(TLS, 'server.key'),
  GRPC_TLS_CLIENT_CA_FILE: path.join(TLS, 'ca.crt'),
  GRPC_TLS_CLIENT_NAMES: 'outreach-gateway,localhost',
};

/**
 * Creates a recipient through the API, reads it back, lists it through the admin API and opens
 * its link once the campaign is launched: each a call from another service to a gRPC server.
 */
async function createReadAndOpen(sys: TestSystem, fx: ProjectFixture): Promise<void> {
  const api = `${sys.gatewayUrl}/api/v1/projects/${fx.projectId}`;
  const created = await http('POST', `${api}/recipients`, {
    token: fx.keys.rw,
    body: { campaignId: fx.campaignId, items: [{ label: 'Ada' }] },
  });
  expect(created.status).toBe(201);
  const recipient = created.body.results[0];
  const read = await http('GET', `${api}/recipients/${recipient.id}`, { token: fx.keys.rw });
  expect(read.status).toBe(200);
  expect(read.body.label).toBe('Ada');
  // The admin API forwards to the recipient service too.
  const listed = await http(
    'GET',
    `${sys.adminUrl}/admin/v1/projects/${fx.projectId}/campaigns/${fx.campaignId}/recipients`,
    { token: sys.adminToken },
  );
  expect(listed.body.total).toBe(1);
  await http('POST', `${sys.adminUrl}/admin/v1/projects/${fx.projectId}/campaigns/${fx.campaignId}/launch`, {
    token: sys.adminToken,
  });
  // The link runtime resolves the link through the recipient service.
  const token = new URL(recipient.link).pathname.split('/').pop();
  await eventually(async () => (await fetch(`${sys.linkUrl}/i/${token}`)).status === 200, 5000);
}

/** A project with a campaign active now. */
function activeProject(sys: TestSystem): Promise<ProjectFixture> {
  const now = Date.now();
  return createProject(sys, {
    startDate: new Date(now - 3600_000).toISOString(),
    endDate: new Date(now + 86_400_000).toISOString(),
  });
}

describe('every call over mutual TLS', () => {
  let sys: TestSystem;
  let fx: ProjectFixture;

  beforeAll(async () => {
    sys = await startSystem({ ...CALLS_TLS, ...SERVER_TLS, ...MUTUAL_TLS }, { metrics: true });
    fx = await activeProject(sys);
  }, 60_000);
  afterAll(() => sys?.stop());

  it('creates, reads and opens a link with every call between the services over TLS, each caller presenting its certificate', async () => {
    await createReadAndOpen(sys, fx);
    for (const service of ['campaign-service', 'recipient-service']) {
      const expiry = sum(
        await scrape(sys.metricsUrls[service]),
        'grpc_server_tls_certificate_expiry_timestamp_seconds',
      );
      expect(new Date(expiry * 1000).getUTCFullYear()).toBeGreaterThan(2100);
    }
    // Every caller, those serving no gRPC included, shows when the certificate it presents expires.
    for (const service of ['gateway', 'link-runtime', 'campaign-service', 'recipient-service']) {
      const presented = sum(
        await scrape(sys.metricsUrls[service]),
        'grpc_client_tls_certificate_expiry_timestamp_seconds',
      );
      expect(new Date(presented * 1000).getUTCFullYear()).toBeGreaterThan(2100);
    }
  });
});

describe('midway through turning TLS on', () => {
  let sys: TestSystem;
  let fx: ProjectFixture;

  beforeAll(async () => {
    // Both servers take both; the gateway and the recipient service still call in plaintext,
    // the link runtime and the campaign service already over TLS.
    sys = await startSystem(
      { ...SERVER_TLS, GRPC_TLS_ACCEPT_PLAINTEXT: 'true' },
      { metrics: true, serviceEnv: { 'link-runtime': CALLS_TLS, 'campaign-service': CALLS_TLS } },
    );
    fx = await activeProject(sys);
  }, 60_000);
  afterAll(() => sys?.stop());

  it('serves callers speaking plaintext and callers speaking TLS, counting each', async () => {
    await createReadAndOpen(sys, fx);
    const connections = async (service: string, transport: string) =>
      sum(await scrape(sys.metricsUrls[service]), 'grpc_server_connections_by_transport_total', {
        transport,
        outcome: 'taken',
      });
    // The recipient service was called by the gateway (plaintext) and the link runtime and the
    // campaign service (TLS); the campaign service by the gateway and the recipient service.
    expect(await connections('recipient-service', 'plaintext')).toBeGreaterThanOrEqual(1);
    expect(await connections('recipient-service', 'tls')).toBeGreaterThanOrEqual(1);
    expect(await connections('campaign-service', 'plaintext')).toBeGreaterThanOrEqual(1);
  });
});
