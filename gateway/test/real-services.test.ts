/**
 * The gateway in front of the REAL recipient-service and campaign-service (not the test
 * backends): keys come from the campaign service's admin API, revocation travels through
 * its outbox and NATS. Every response is checked against the OpenAPI document.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { loadCampaignsProto, loadHealthProto, loadRecipientsProto } from '@outreach/contracts';
import { callUnary, INTERNAL_TOKEN_REFUSED, internalClient, type RunningService } from '@outreach/platform';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import pino from 'pino';
import { start as startCampaigns } from '../../campaign-service/src/server';
import { start as startRecipients } from '../../recipient-service/src/server';
import { createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import { untilRefused } from '../../test/support/revocation';
import { freePort } from '../../test/support/system';
import { start as startGateway } from '../src/server';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
type Reply = { status: number; body: any; text: string; headers: Headers };

let ns: TestNamespace;
const services: RunningService[] = [];
let adminUrl: string;
let gatewayUrl: string;
const ADMIN = 'admin-token-for-gateway-tests';
// Every gRPC call between the services carries it; the servers refuse one without it.
const INTERNAL = 'internal-token-for-gateway-tests-0123456789';
let env: Record<string, string>;
let grpcAddrs: { recipients: string; campaigns: string };

async function http(method: string, url: string, token?: string, body?: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
const admin = async (method: string, path: string, body?: unknown) => {
  const r = await http(method, `${adminUrl}/admin/v1${path}`, ADMIN, body);
  if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${r.text}`);
  return r.body;
};

/** A project with a campaign not started yet and a read-write key, and the project's API base. */
async function projectWithKey(name: string) {
  const project = await admin('POST', '/projects', { name });
  const device = await admin('POST', `/projects/${project.id}/devices`, { name: 'd', persona: 'You help.' });
  const campaign = await admin('POST', `/projects/${project.id}/campaigns`, {
    name: 'c',
    deviceId: device.id,
    startDate: new Date(Date.now() + 3600_000).toISOString(),
    endDate: new Date(Date.now() + 86400_000).toISOString(),
    budgetMode: 'metered',
  });
  const { key } = await admin('POST', `/projects/${project.id}/api-keys`, {
    name: 'rw',
    scopes: ['recipients:read', 'recipients:write'],
  });
  return { campaign, key: key as string, base: `${gatewayUrl}/api/v1/projects/${project.id}` };
}

beforeAll(async () => {
  ns = await createTestNamespace();
  const [recipientPort, campaignPort] = [await freePort(), await freePort()];
  env = {
    ...ns.env,
    HOST: '127.0.0.1',
    ADMIN_TOKEN: ADMIN,
    INTERNAL_TOKEN: INTERNAL,
    RECIPIENT_GRPC_PORT: String(recipientPort),
    CAMPAIGN_GRPC_PORT: String(campaignPort),
    DASHBOARD_PORT: '0',
    GATEWAY_PORT: '0',
    RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipientPort}`,
    CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${campaignPort}`,
  };
  grpcAddrs = { recipients: env.RECIPIENT_SERVICE_ADDR, campaigns: env.CAMPAIGN_SERVICE_ADDR };
  const campaigns = await startCampaigns(env);
  services.push(campaigns);
  services.push(await startRecipients(env));
  const gateway = await startGateway(env);
  services.push(gateway);
  adminUrl = `http://127.0.0.1:${campaigns.ports.http}`;
  gatewayUrl = `http://127.0.0.1:${gateway.ports.http}`;
}, 60_000);
afterAll(async () => {
  for (const s of services.reverse()) await s.stop().catch(() => undefined);
  await ns?.cleanup();
});

test('every endpoint through the real services conforms to the OpenAPI document', async () => {
  const { campaign, key, base } = await projectWithKey('gw');
  const doc = (await http('GET', `${gatewayUrl}/api/v1/openapi.json`)).body;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'https://outreach.test/openapi', components: doc.components });
  const conforms = (template: string, method: string, r: { status: number; body: unknown; text: string }) => {
    const response = doc.paths[`/api/v1/projects/{projectId}${template}`][method].responses[String(r.status)];
    if (!response) throw new Error(`${method} ${template} ${r.status} undocumented: ${r.text}`);
    const v = ajv.compile({
      $ref: `https://outreach.test/openapi${response.content['application/json'].schema.$ref}`,
    });
    if (!v(r.body))
      throw new Error(`${method} ${template} ${r.status}: ${ajv.errorsText(v.errors)} ${r.text}`);
  };

  const created = await http('POST', `${base}/recipients`, key, {
    campaignId: campaign.id,
    items: [
      { externalId: 'a@example.com', label: 'A', metadata: { n: 1 } },
      { externalId: 'a@example.com' },
      { bad: 1 },
    ],
  });
  expect(created.status).toBe(201);
  conforms('/recipients', 'post', created);
  const id = created.body.results[0].id;
  const steps: [string, string, string, unknown?][] = [
    ['get', '/campaigns', '/campaigns'],
    ['get', '/recipients', `/recipients?campaignId=${campaign.id}`],
    ['get', '/recipients/{recipientId}', `/recipients/${id}`],
    ['patch', '/recipients/{recipientId}', `/recipients/${id}`, { label: 'B' }],
    ['patch', '/recipients/{recipientId}', `/recipients/${id}`, {}],
    ['get', '/recipients/{recipientId}', '/recipients/rcp_missing'],
    ['delete', '/recipients/{recipientId}', `/recipients/${id}`],
    ['post', '/recipients/bulk-delete', '/recipients/bulk-delete', { all: true }],
    ['get', '/recipients', '/recipients?campaignId=cmp_missing'],
  ];
  for (const [method, template, path, body] of steps) {
    const r = await http(method.toUpperCase(), `${base}${path}`, key, body);
    conforms(template, method, r);
  }
  const campaignsList = await http('GET', `${base}/campaigns`, key);
  expect(campaignsList.body.campaigns[0]).toMatchObject({
    id: campaign.id,
    state: 'draft',
    recipientCount: 0,
  });
});

test('a key revoked in the dashboard is refused by the gateway within 1 s', async () => {
  const project = await admin('POST', '/projects', { name: 'rev' });
  const k = await admin('POST', `/projects/${project.id}/api-keys`, {
    name: 'r',
    scopes: ['recipients:read'],
  });
  const url = `${gatewayUrl}/api/v1/projects/${project.id}/campaigns`;
  expect((await http('GET', url, k.key)).status).toBe(200);
  await admin('DELETE', `/projects/${project.id}/api-keys/${k.id}`);
  const refused = await untilRefused(async () => (await http('GET', url, k.key)).status, Date.now(), {
    everyMs: 25,
  });
  expect(refused.status).toBe(401);
  expect(refused.lastAdmittedMs).toBeLessThan(1000);
});

test("a nullable field's refusal says what is wrong with the value, never that it must be null", async () => {
  const { campaign, key, base } = await projectWithKey('nullable');
  const minimum = (field: string) => ({ pointer: `/${field}`, rule: 'minimum', message: 'must be >= 1' });

  const created = await http('POST', `${base}/recipients`, key, {
    campaignId: campaign.id,
    items: [{ label: 'ok' }, { maxTotalInteractions: 0 }, { disabledMessage: 'x'.repeat(2001) }],
  });
  expect(created.status).toBe(201);
  const [ok, count, message] = created.body.results;
  expect(count.details).toEqual({
    pointer: '/maxTotalInteractions',
    rule: 'minimum',
    problems: [minimum('maxTotalInteractions')],
  });
  expect(message.details.problems).toEqual([
    { pointer: '/disabledMessage', rule: 'maxLength', message: 'must NOT have more than 2000 characters' },
  ]);

  const patched = await http('PATCH', `${base}/recipients/${ok.id}`, key, { windowSeconds: 0 });
  expect(patched.status).toBe(400);
  expect(patched.body.details).toEqual({
    pointer: '/windowSeconds',
    rule: 'minimum',
    problems: [minimum('windowSeconds')],
  });
});

test('a body nested as deep as JSON.parse takes gets the answer any body of its types gets, never a 500', async () => {
  const { campaign, key, base } = await projectWithKey('deep');
  // 30,000 levels: JSON.parse takes them; a walk or a JSON.stringify by recursion overflows the stack.
  const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
  const send = async (method: string, url: string, text: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: text,
    });
    return { status: res.status, body: await res.json() };
  };
  const created = await http('POST', `${base}/recipients`, key, {
    campaignId: campaign.id,
    items: [{ externalId: 'deep@example.com' }],
  });
  expect(created.status).toBe(201);
  const id = created.body.results[0].id;

  // The whole body, a field of it: the schema's 400.
  expect(await send('POST', `${base}/recipients`, deep)).toMatchObject({
    status: 400,
    body: { code: 'invalid_request' },
  });
  expect(await send('PATCH', `${base}/recipients/${id}`, `{"label":${deep}}`)).toMatchObject({
    status: 400,
    body: { code: 'invalid_request', details: { pointer: '/label' } },
  });
  // An item of a create (passed on to the recipient service as JSON text), with and without an
  // Idempotency-Key (whose fingerprint is the canonical text of the body): that item's error.
  const items = `{"campaignId":${JSON.stringify(campaign.id)},"items":[{"externalId":"x@example.com","metadata":{"k":${deep}}}]}`;
  for (const headers of [{}, { 'idempotency-key': 'deep-body-key-0001' }]) {
    const r = await send('POST', `${base}/recipients`, items, headers);
    expect(r).toMatchObject({ status: 422, body: { created: 0, results: [{ status: 'error', index: 0 }] } });
  }
  // The admin API reads its bodies the same way.
  const adminAnswer = await fetch(`${adminUrl}/admin/v1/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: `{"name":${deep}}`,
  });
  expect(adminAnswer.status).toBe(400);
  expect(((await adminAnswer.json()) as { code: string }).code).toBe('invalid_request');
});

describe('the internal token (INTERNAL_TOKEN)', () => {
  const RecipientService = loadRecipientsProto().outreach.v1.RecipientService;
  const CampaignService = loadCampaignsProto().outreach.v1.CampaignService;
  const Health = loadHealthProto().grpc.health.v1.Health;

  it('is required of every gRPC call by both services, health checks aside', async () => {
    const { campaign } = await projectWithKey('internal-token');
    const projectId = campaign.projectId as string;
    const calls = (token: string | undefined) => {
      const recipients = internalClient(RecipientService, grpcAddrs.recipients, { token });
      const campaigns = internalClient(CampaignService, grpcAddrs.campaigns, { token });
      const ask = [
        callUnary<object, { total: number }>(recipients, 'ListRecipients', {
          projectId,
          campaignId: campaign.id,
          limit: 10,
        }),
        callUnary<object, { campaigns: { id: string }[] }>(campaigns, 'ListCampaigns', { projectId }),
      ] as const;
      return Promise.allSettled(ask).finally(() => {
        recipients.close();
        campaigns.close();
      });
    };
    for (const token of [undefined, 'wrong-internal-token-of-enough-characters', `${INTERNAL}x`]) {
      const answers = await calls(token);
      for (const answer of answers) {
        expect(answer.status).toBe('rejected');
        expect((answer as PromiseRejectedResult).reason.code).toBe(GrpcStatus.UNAUTHENTICATED);
      }
    }
    const [listed, campaigns] = await calls(INTERNAL);
    expect(listed).toMatchObject({ status: 'fulfilled', value: { total: 0 } });
    expect(campaigns).toMatchObject({ status: 'fulfilled', value: { campaigns: [{ id: campaign.id }] } });
    // Probes carry no token.
    for (const addr of Object.values(grpcAddrs)) {
      const health = internalClient(Health, addr, { token: undefined }, {});
      try {
        expect(await callUnary(health, 'Check', { service: '' })).toEqual({ status: 'SERVING' });
      } finally {
        health.close();
      }
    }
  });

  it('under INTERNAL_TOKEN_MODE=accept-missing is not asked of a call without one, and a wrong one still refused', async () => {
    const { campaign } = await projectWithKey('internal-transition');
    const projectId = campaign.projectId as string;
    const [recipientPort, campaignPort] = [await freePort(), await freePort()];
    const transition = {
      ...env,
      INTERNAL_TOKEN_MODE: 'accept-missing',
      RECIPIENT_GRPC_PORT: String(recipientPort),
      CAMPAIGN_GRPC_PORT: String(campaignPort),
    };
    const started = [await startRecipients(transition), await startCampaigns(transition)];
    const calls = (token: string | undefined) => {
      const recipients = internalClient(RecipientService, `127.0.0.1:${recipientPort}`, { token });
      const campaigns = internalClient(CampaignService, `127.0.0.1:${campaignPort}`, { token });
      const ask = [
        callUnary(recipients, 'ListRecipients', { projectId, campaignId: campaign.id, limit: 10 }),
        callUnary(campaigns, 'ListCampaigns', { projectId }),
      ] as const;
      return Promise.allSettled(ask).finally(() => {
        recipients.close();
        campaigns.close();
      });
    };
    try {
      // A pod of a release before the token calls without one.
      for (const answer of [...(await calls(undefined)), ...(await calls(INTERNAL))])
        expect(answer.status).toBe('fulfilled');
      for (const answer of await calls(`${INTERNAL}x`)) {
        expect(answer.status).toBe('rejected');
        expect((answer as PromiseRejectedResult).reason.code).toBe(GrpcStatus.UNAUTHENTICATED);
      }
    } finally {
      for (const service of started) await service.stop();
    }
  });

  it('is required in production by the gateway and the recipient service too', async () => {
    for (const startService of [startGateway, startRecipients]) {
      await expect(startService({ ...env, NODE_ENV: 'production', INTERNAL_TOKEN: '' })).rejects.toThrow(
        'INTERNAL_TOKEN is required in production',
      );
    }
  });

  it('refuses INTERNAL_TOKEN_ALSO_ACCEPTED at the start of every service when it cannot work', async () => {
    const NEXT = 'next-internal-token-for-gateway-tests-01';
    const free = { ...env, RECIPIENT_GRPC_PORT: '0', CAMPAIGN_GRPC_PORT: '0' };
    /** What a start was refused with; a service that started is stopped again. */
    const refusal = async (startService: (e: NodeJS.ProcessEnv) => Promise<RunningService>, e: object) => {
      try {
        await (await startService({ ...free, ...e })).stop();
        return 'started';
      } catch (err) {
        return (err as Error).message;
      }
    };
    for (const startService of [startGateway, startRecipients, startCampaigns]) {
      expect(await refusal(startService, { INTERNAL_TOKEN_ALSO_ACCEPTED: INTERNAL })).toContain(
        'INTERNAL_TOKEN_ALSO_ACCEPTED must differ from INTERNAL_TOKEN',
      );
      expect(
        await refusal(startService, { INTERNAL_TOKEN: '', INTERNAL_TOKEN_ALSO_ACCEPTED: NEXT }),
      ).toContain('INTERNAL_TOKEN_ALSO_ACCEPTED is set without INTERNAL_TOKEN');
      expect(
        await refusal(startService, { NODE_ENV: 'production', INTERNAL_TOKEN_ALSO_ACCEPTED: 'short' }),
      ).toContain('INTERNAL_TOKEN_ALSO_ACCEPTED must be at least 32 characters in production');
    }
  });

  it('keeps every call working while INTERNAL_TOKEN is rotated: pods of step 1 and step 2 side by side', async () => {
    const { campaign, key } = await projectWithKey('internal-rotation');
    const NEXT = 'next-internal-token-for-gateway-tests-01';
    const [recipientPort, campaignPort] = [await freePort(), await freePort()];
    const backends = {
      RECIPIENT_SERVICE_ADDR: `127.0.0.1:${recipientPort}`,
      CAMPAIGN_SERVICE_ADDR: `127.0.0.1:${campaignPort}`,
      RECIPIENT_GRPC_PORT: String(recipientPort),
      CAMPAIGN_GRPC_PORT: String(campaignPort),
    };
    // Step 1 (still running): the previous token, the next one accepted as well. Step 2 (rolling
    // out): the next token, the previous one accepted as well.
    const step1 = { ...env, ...backends, INTERNAL_TOKEN: INTERNAL, INTERNAL_TOKEN_ALSO_ACCEPTED: NEXT };
    const step2 = { ...env, ...backends, INTERNAL_TOKEN: NEXT, INTERNAL_TOKEN_ALSO_ACCEPTED: INTERNAL };
    const started: RunningService[] = [];
    try {
      const campaigns = await startCampaigns({ ...step1, METRICS_PORT: String(await freePort()) });
      started.push(campaigns);
      const recipients = await startRecipients({ ...step2, METRICS_PORT: String(await freePort()) });
      started.push(recipients);
      const gateways = { step1: await startGateway(step1), step2: await startGateway(step2) };
      started.push(gateways.step1, gateways.step2);

      // Each gateway asks the step-1 campaign service for the key and the step-2 recipient service
      // for the write, which asks the campaign service whether the campaign takes recipients.
      for (const [step, gateway] of Object.entries(gateways)) {
        const base = `http://127.0.0.1:${gateway.ports.http}/api/v1/projects/${campaign.projectId}`;
        const created = await http('POST', `${base}/recipients`, key, {
          campaignId: campaign.id,
          items: [{ externalId: `${step}@example.com` }],
        });
        expect([step, created.status, created.body.created]).toEqual([step, 201, 1]);
        const listed = await http('GET', `${base}/recipients?campaignId=${campaign.id}`, key);
        expect([step, listed.status]).toEqual([step, 200]);
      }
      // The step-1 campaign service's dashboard list calls the step-2 recipient service.
      const list = await fetch(
        `http://127.0.0.1:${campaigns.ports.http}/admin/v1/projects/${campaign.projectId}/campaigns/${campaign.id}/recipients`,
        { headers: { authorization: `Bearer ${ADMIN}` } },
      );
      expect(list.status).toBe(200);
      const externalIds = ((await list.json()) as { recipients: { externalId: string }[] }).recipients
        .map((r) => r.externalId)
        .sort();
      expect(externalIds).toEqual(['step1@example.com', 'step2@example.com']);

      // Both servers counted the calls that came with their second token.
      for (const service of [campaigns, recipients]) {
        const text = await (await fetch(`http://127.0.0.1:${service.ports.metrics}/metrics`)).text();
        const count = Number(
          /^grpc_server_internal_token_also_accepted_total\{[^}]*\} (\S+)$/m.exec(text)?.[1],
        );
        expect([service.name, count > 0]).toEqual([service.name, true]);
      }
      // Any other token is still refused by both.
      const stranger = [
        internalClient(RecipientService, backends.RECIPIENT_SERVICE_ADDR, { token: `${NEXT}x` }),
        internalClient(CampaignService, backends.CAMPAIGN_SERVICE_ADDR, { token: `${NEXT}x` }),
      ];
      try {
        const answers = await Promise.allSettled([
          callUnary(stranger[0], 'ListRecipients', {
            projectId: campaign.projectId,
            campaignId: campaign.id,
          }),
          callUnary(stranger[1], 'ListCampaigns', { projectId: campaign.projectId }),
        ]);
        for (const answer of answers)
          expect((answer as PromiseRejectedResult).reason?.code).toBe(GrpcStatus.UNAUTHENTICATED);
      } finally {
        for (const client of stranger) client.close();
      }
    } finally {
      for (const service of started.reverse()) await service.stop();
    }
  });

  it('carries every call along the whole path: gateway, recipient service, campaign service and back', async () => {
    const { campaign, key, base } = await projectWithKey('internal-path');
    // The gateway asks the campaign service for the key, the recipient service asks it whether the
    // campaign takes recipients; the dashboard's list goes from the campaign service to the recipients.
    const created = await http('POST', `${base}/recipients`, key, {
      campaignId: campaign.id,
      items: [{ externalId: 'path@example.com' }],
    });
    expect(created.status).toBe(201);
    expect(created.body.created).toBe(1);
    const listed = await admin('GET', `/projects/${campaign.projectId}/campaigns/${campaign.id}/recipients`);
    expect(listed.recipients.map((r: { externalId: string }) => r.externalId)).toEqual(['path@example.com']);
  });

  it('answers 503 unavailable, without detail, from a gateway whose token the services refuse', async () => {
    const { campaign, key } = await projectWithKey('internal-wrong');
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const wrong = await startGateway(
      { ...env, INTERNAL_TOKEN: 'a-different-internal-token-0123456789' },
      { logger },
    );
    try {
      const res = await http(
        'GET',
        `http://127.0.0.1:${wrong.ports.http}/api/v1/projects/${campaign.projectId}/recipients?campaignId=${campaign.id}`,
        key,
      );
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('unavailable');
      expect(res.text).not.toMatch(/INTERNAL_TOKEN|UNAUTHENTICATED|token/i);
      // Its log says what is wrong.
      expect(lines.join('')).toContain(INTERNAL_TOKEN_REFUSED);
    } finally {
      await wrong.stop();
    }
  });
});
