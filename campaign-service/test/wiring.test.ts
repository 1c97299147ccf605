import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { loadRecipientsProto } from '@outreach/contracts';
import {
  AppError,
  ConfigError,
  MIN_INTERNAL_TOKEN_LENGTH,
  type RunningService,
  toServiceError,
} from '@outreach/platform';
import { freePort } from '../../test/support/system';
import { MIN_ADMIN_TOKEN_LENGTH } from '../src/server';
import { adminClient, createTestNamespace, serviceEnv, start } from './helpers';

type Ns = Awaited<ReturnType<typeof createTestNamespace>>;
type Call = ServerUnaryCall<Record<string, unknown>, unknown>;

let ns: Ns;
let service: RunningService;
let recipients: Server;
const calls: Array<[string, Record<string, unknown>]> = [];

/**
 * A stand-in RecipientService: that service is another team's, and this suite only
 * proves what the campaign service forwards and how it maps the answers back.
 */
function handler(name: string, answer: (req: Record<string, unknown>) => unknown) {
  return (call: Call, cb: sendUnaryData<unknown>) => {
    calls.push([name, call.request]);
    try {
      cb(null, answer(call.request));
    } catch (err) {
      cb(toServiceError(err as AppError));
    }
  };
}

beforeAll(async () => {
  ns = await createTestNamespace();
  recipients = new Server();
  const proto = loadRecipientsProto();
  const recipient = (id: string, campaignId: string) => ({
    id,
    campaignId,
    projectId: 'x',
    link: `http://l/i/${id}`,
  });
  recipients.addService(proto.outreach.v1.RecipientService.service, {
    ListRecipients: handler('ListRecipients', () => ({ total: 1, recipients: [recipient('rcp_1', 'c')] })),
    CreateRecipients: handler('CreateRecipients', (req) => ({
      created: (req.itemsJson as string[]).length,
      failed: 0,
      total: (req.itemsJson as string[]).length,
      results: [],
    })),
    GetRecipient: handler('GetRecipient', (req) => {
      if (req.recipientId === 'rcp_gone') throw new AppError('not_found', 'Recipient not found.');
      return recipient(req.recipientId as string, String(req.recipientId).split('__')[1] ?? 'other');
    }),
    UpdateRecipient: handler('UpdateRecipient', (req) => {
      throw new AppError('conflict', 'not editable', {
        details: { reason: 'not_editable', patch: req.patchJson },
      });
    }),
    DeleteRecipient: handler('DeleteRecipient', (req) => ({ success: true, id: req.recipientId })),
  });
  const port = await new Promise<number>((resolve, reject) =>
    recipients.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  service = await start(serviceEnv(ns, { RECIPIENT_SERVICE_ADDR: `127.0.0.1:${port}`, METRICS_PORT: '0' }));
});

afterAll(async () => {
  await service?.stop();
  recipients?.forceShutdown();
  await ns?.cleanup();
});

it('refuses to start in production without ADMIN_TOKEN, or with one short enough to guess', async () => {
  const env = {
    ...serviceEnv(ns),
    NODE_ENV: 'production',
    ADMIN_TOKEN: '',
    INTERNAL_TOKEN: 'x'.repeat(MIN_INTERNAL_TOKEN_LENGTH),
  };
  await expect(start(env)).rejects.toThrow('ADMIN_TOKEN is required in production');
  await expect(start(env)).rejects.toBeInstanceOf(ConfigError);
  const short = { ...env, ADMIN_TOKEN: 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH - 1) };
  await expect(start(short)).rejects.toThrow(
    `ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`,
  );
});

it('refuses to start in production without INTERNAL_TOKEN, or with one shorter than 32 characters', async () => {
  const env = {
    ...serviceEnv(ns),
    NODE_ENV: 'production',
    ADMIN_TOKEN: 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH),
    INTERNAL_TOKEN: '',
  };
  await expect(start(env)).rejects.toThrow('INTERNAL_TOKEN is required in production');
  const short = { ...env, INTERNAL_TOKEN: 'x'.repeat(MIN_INTERNAL_TOKEN_LENGTH - 1) };
  await expect(start(short)).rejects.toThrow(
    `INTERNAL_TOKEN must be at least ${MIN_INTERNAL_TOKEN_LENGTH} characters`,
  );
});

it('forwards recipient operations to RecipientService and maps its errors back', async () => {
  const api = adminClient(service);
  const p = (await api('POST', '/admin/v1/projects', { name: 'R' })).body.id;
  const d = (await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Web' })).body.id;
  const c = (
    await api('POST', `/admin/v1/projects/${p}/campaigns`, {
      name: 'c',
      deviceId: d,
      startDate: '2030-01-01T00:00:00.000Z',
      endDate: '2030-02-01T00:00:00.000Z',
      budgetMode: 'metered',
    })
  ).body.id;
  const base = `/admin/v1/projects/${p}/campaigns/${c}/recipients`;

  const list = await api('GET', `${base}?limit=10&offset=5&active=true`);
  expect(list.status).toBe(200);
  expect(list.body.total).toBe(1);
  expect(Object.keys(list.body.recipients[0]).some((k) => k.startsWith('_'))).toBe(false);
  expect(calls.at(-1)).toEqual([
    'ListRecipients',
    expect.objectContaining({ projectId: p, campaignId: c, limit: 10, offset: 5, active: true }),
  ]);
  expect((await api('GET', `${base}?limit=500`)).status).toBe(400);

  const created = await api('POST', base, { items: [{ externalId: 'a' }, { externalId: 'b' }] });
  expect(created.status).toBe(201);
  expect(calls.at(-1)?.[1].itemsJson).toEqual(['{"externalId":"a"}', '{"externalId":"b"}']);

  const rid = `rcp_x__${c}`;
  const patched = await api('PATCH', `${base}/${rid}`, { label: 'L' });
  expect(patched.status).toBe(409);
  expect(patched.body).toMatchObject({ code: 'conflict', details: { reason: 'not_editable' } });

  expect((await api('DELETE', `${base}/${rid}`)).body).toEqual({ success: true, id: rid });
  // A recipient of another campaign is not found through this campaign's path.
  expect((await api('DELETE', `${base}/rcp_y__cmp_other`)).status).toBe(404);
  expect((await api('DELETE', `${base}/rcp_gone`)).body.code).toBe('not_found');
  // An unknown campaign never reaches RecipientService.
  const before = calls.length;
  expect((await api('GET', `/admin/v1/projects/${p}/campaigns/cmp_missing/recipients`)).status).toBe(404);
  expect(calls.length).toBe(before);
});

it('answers 503 unavailable when RecipientService is down', async () => {
  const down = await start(serviceEnv(ns, { RECIPIENT_SERVICE_ADDR: '127.0.0.1:1' }));
  try {
    const api = adminClient(down);
    const p = (await api('POST', '/admin/v1/projects', { name: 'D' })).body.id;
    const d = (await api('POST', `/admin/v1/projects/${p}/devices`, { name: 'Web' })).body.id;
    const c = (
      await api('POST', `/admin/v1/projects/${p}/campaigns`, {
        name: 'c',
        deviceId: d,
        startDate: '2030-01-01T00:00:00.000Z',
        endDate: '2030-02-01T00:00:00.000Z',
        budgetMode: 'metered',
      })
    ).body.id;
    const res = await api('GET', `/admin/v1/projects/${p}/campaigns/${c}/recipients`);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'unavailable', retryable: true });
  } finally {
    await down.stop();
  }
});

it('serves Prometheus metrics with request counters when METRICS_PORT is set', async () => {
  const m = await start(serviceEnv(ns, { METRICS_PORT: '0' }));
  await m.stop();
  // METRICS_PORT=0 means off; a real port is needed to serve them.
  expect(m.ports.metrics).toBeUndefined();
  const withMetrics = await start(serviceEnv(ns, { METRICS_PORT: String(await freePort()) }));
  try {
    await adminClient(withMetrics)('GET', '/admin/v1/projects');
    const text = await (await fetch(`http://127.0.0.1:${withMetrics.ports.metrics}/metrics`)).text();
    expect(text).toMatch(/http_requests_total\{[^}]*route="\/admin\/v1\/projects"[^}]*status="200"[^}]*\} 1/);
  } finally {
    await withMetrics.stop();
  }
});
