/**
 * TEST BACKENDS — small in-memory gRPC servers implementing the RecipientService and
 * CampaignService protos, so the gateway can be tested over real gRPC before (and
 * independently of) the real services. They are not the product's services: their rules
 * are only as deep as the gateway tests need. The cross-service suite in /test uses the
 * real ones.
 */
import { randomBytes } from 'node:crypto';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { loadCampaignsProto, loadRecipientsProto, toCreateResponse, validator } from '@outreach/contracts';
import {
  AppError,
  addGrpcHealth,
  campaignNotFound,
  createLogger,
  Lifecycle,
  toItemRefusal,
  unary,
} from '@outreach/platform';
import { hashKey } from '../../src/middleware/authenticate';

export interface TestRecipient {
  id: string;
  campaignId: string;
  projectId: string;
  externalId?: string;
  label?: string;
  metadata: Record<string, string>;
  deviceId: string;
  isActive: boolean;
  link: string;
  injectionMode: string;
  injectionInstructions?: string;
  maxTotalInteractions?: number;
  maxInteractionsPerWindow?: number;
  windowSeconds?: number;
  interactionCount: number;
  lastInteractionAt?: string;
  disabledMessage?: string;
  cooldownMessage?: string;
  distillationStatus: string;
  createdAt: string;
}

export interface TestCampaign {
  id: string;
  projectId: string;
  name: string;
  state: 'draft' | 'upcoming' | 'active' | 'completed';
}

export interface TestKey {
  keyId: string;
  projectId: string;
  scopes: string[];
  rateLimitPerMinute: number;
  expiresAt?: string;
  revoked: boolean;
}

/** The data both test backends serve, mutable by tests. */
export class TestData {
  campaigns: TestCampaign[] = [];
  recipients: TestRecipient[] = [];
  keys = new Map<string, TestKey>();
  /** Milliseconds every RecipientService call waits first (for in-flight tests). */
  recipientDelayMs = 0;
  calls: string[] = [];
  /** The gRPC metadata of the last ListCampaigns call. */
  lastListMetadata: Record<string, unknown> = {};
  /** The gRPC metadata of the last VerifyApiKey call. */
  lastVerifyMetadata: Record<string, unknown> = {};

  addCampaign(projectId: string, state: TestCampaign['state'] = 'draft', name = 'Spring'): TestCampaign {
    const c = { id: `cmp_${randomBytes(6).toString('hex')}`, projectId, name, state };
    this.campaigns.push(c);
    return c;
  }

  /** Creates a key and returns its secret text. */
  addKey(
    projectId: string,
    scopes: string[],
    options: Partial<TestKey> = {},
  ): { key: string; keyId: string } {
    const key = `ok_test_${randomBytes(16).toString('hex')}`;
    const keyId = `key_${randomBytes(6).toString('hex')}`;
    this.keys.set(hashKey(key), {
      keyId,
      projectId,
      scopes,
      rateLimitPerMinute: 600,
      revoked: false,
      ...options,
    });
    return { key, keyId };
  }

  revoke(keyId: string): void {
    for (const k of this.keys.values()) if (k.keyId === keyId) k.revoked = true;
  }
}

const logger = createLogger('test-backends', 'silent');
const nowIso = () => new Date().toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function campaignMessage(c: TestCampaign) {
  return {
    id: c.id,
    projectId: c.projectId,
    name: c.name,
    state: c.state,
    budgetMode: 'metered',
    deviceId: 'dev_test',
    startDate: '2026-12-01T00:00:00.000Z',
    endDate: '2026-12-31T00:00:00.000Z',
    timing: { state: c.state, now: nowIso(), ...(c.state === 'upcoming' ? { startsInSeconds: 3600 } : {}) },
    createdAt: '2026-11-01T00:00:00.000Z',
  };
}

function campaignService(data: TestData) {
  const find = (projectId: string, id: string) => {
    const c = data.campaigns.find((x) => x.id === id && x.projectId === projectId);
    if (!c) throw campaignNotFound(id);
    return c;
  };
  return {
    ListCampaigns: unary(
      logger,
      'ListCampaigns',
      async (req: { projectId: string; state?: string }, call: { metadata: { getMap(): object } }) => {
        data.lastListMetadata = { ...call.metadata.getMap() };
        return {
          campaigns: data.campaigns
            .filter(
              (c) => c.projectId === req.projectId && (req.state === undefined || c.state === req.state),
            )
            .map(campaignMessage),
        };
      },
    ),
    GetCampaign: unary(logger, 'GetCampaign', async (req: { projectId: string; campaignId: string }) =>
      campaignMessage(find(req.projectId, req.campaignId)),
    ),
    GetAllowance: unary(logger, 'GetAllowance', async (req: { projectId: string; campaignId: string }) => {
      find(req.projectId, req.campaignId);
      return { used: 3, included: 100, remaining: 97, exhausted: false };
    }),
    VerifyApiKey: unary(
      logger,
      'VerifyApiKey',
      async (req: { keyHash: string }, call: { metadata: { getMap(): object } }) => {
        data.calls.push('VerifyApiKey');
        data.lastVerifyMetadata = { ...call.metadata.getMap() };
        const k = data.keys.get(req.keyHash);
        if (!k || k.revoked) throw new AppError('unauthorized', 'Unknown API key.');
        return k;
      },
    ),
  };
}

function recipientService(data: TestData) {
  const itemValid = validator('create-item');
  const patchValid = validator('patch');
  const wrap = <Req, Res>(name: string, fn: (req: Req) => Promise<Res>) =>
    unary(logger, name, async (req: Req) => {
      data.calls.push(name);
      if (data.recipientDelayMs) await sleep(data.recipientDelayMs);
      return fn(req);
    });
  const findCampaign = (projectId: string, id: string) => {
    const c = data.campaigns.find((x) => x.id === id && x.projectId === projectId);
    if (!c) throw campaignNotFound(id);
    return c;
  };
  const findRecipient = (projectId: string, id: string) => {
    const r = data.recipients.find((x) => x.id === id && x.projectId === projectId);
    if (!r) throw new AppError('not_found', 'Recipient not found.');
    return r;
  };
  const editable = (c: TestCampaign) => {
    if (c.state !== 'draft' && c.state !== 'upcoming')
      throw new AppError('conflict', 'The campaign is not editable.', {
        details: { reason: 'not_editable' },
      });
  };
  return {
    CreateRecipients: wrap(
      'CreateRecipients',
      async (req: { projectId: string; campaignId: string; itemsJson: string[]; wantBodyJson: boolean }) => {
        const c = findCampaign(req.projectId, req.campaignId);
        editable(c);
        const results = req.itemsJson.map((text, index) => {
          const item = JSON.parse(text) as Record<string, unknown>;
          const problems = itemValid(item);
          if (problems.length) {
            return {
              status: 'error',
              index,
              externalId: typeof item?.externalId === 'string' ? item.externalId : undefined,
              code: 'invalid_request',
              error: `${problems[0].pointer} ${problems[0].message}`,
              detailsJson: JSON.stringify({ problems }),
            };
          }
          const dup = data.recipients.find(
            (r) => item.externalId !== undefined && r.campaignId === c.id && r.externalId === item.externalId,
          );
          if (dup) return { status: 'duplicate', index, externalId: dup.externalId, id: dup.id };
          const r: TestRecipient = {
            id: `rcp_${randomBytes(6).toString('hex')}`,
            campaignId: c.id,
            projectId: c.projectId,
            externalId: item.externalId as string | undefined,
            label: item.label as string | undefined,
            metadata: Object.fromEntries(
              Object.entries((item.metadata as Record<string, unknown>) ?? {}).map(([k, v]) => [
                k,
                String(v),
              ]),
            ),
            deviceId: 'dev_test',
            isActive: (item.isActive as boolean | undefined) ?? true,
            link: `http://localhost:8081/i/${randomBytes(16).toString('base64url')}`,
            injectionMode: (item.injectionMode as string | undefined) ?? 'append',
            injectionInstructions: (item.injectionInstructions as string | undefined) ?? undefined,
            maxTotalInteractions: (item.maxTotalInteractions as number | undefined) ?? undefined,
            interactionCount: 0,
            distillationStatus: 'none',
            createdAt: nowIso(),
          };
          data.recipients.push(r);
          return { status: 'created', index, externalId: r.externalId, id: r.id, recipient: r };
        });
        const created = results.filter((r) => r.status === 'created').length;
        const outcome = { created, failed: results.length - created, total: results.length, results };
        if (!req.wantBodyJson) return outcome;
        const bodyJson = JSON.stringify(toCreateResponse(outcome as Parameters<typeof toCreateResponse>[0]));
        return { created, failed: outcome.failed, total: outcome.total, results: [], bodyJson };
      },
    ),
    ListRecipients: wrap(
      'ListRecipients',
      async (req: {
        projectId: string;
        campaignId: string;
        limit: number;
        offset: number;
        active?: boolean;
      }) => {
        findCampaign(req.projectId, req.campaignId);
        const all = data.recipients.filter(
          (r) => r.campaignId === req.campaignId && (req.active === undefined || r.isActive === req.active),
        );
        return { total: all.length, recipients: all.slice(req.offset, req.offset + req.limit) };
      },
    ),
    GetRecipient: wrap('GetRecipient', async (req: { projectId: string; recipientId: string }) =>
      findRecipient(req.projectId, req.recipientId),
    ),
    GetRecipients: wrap(
      'GetRecipients',
      async (req: { lookups: { projectId: string; recipientId: string }[] }) => ({
        results: req.lookups.map((l) => {
          try {
            return { recipient: findRecipient(l.projectId, l.recipientId) };
          } catch (err) {
            return toItemRefusal(err as AppError);
          }
        }),
      }),
    ),
    UpdateRecipient: wrap(
      'UpdateRecipient',
      async (req: { projectId: string; recipientId: string; patchJson: string }) => {
        const r = findRecipient(req.projectId, req.recipientId);
        const patch = JSON.parse(req.patchJson);
        const problems = patchValid(patch);
        if (problems.length) throw new AppError('invalid_request', undefined, { details: { problems } });
        editable(findCampaign(req.projectId, r.campaignId));
        for (const [k, v] of Object.entries(patch))
          (r as unknown as Record<string, unknown>)[k] = v ?? undefined;
        return r;
      },
    ),
    DeleteRecipient: wrap('DeleteRecipient', async (req: { projectId: string; recipientId: string }) => {
      const r = findRecipient(req.projectId, req.recipientId);
      editable(findCampaign(req.projectId, r.campaignId));
      data.recipients = data.recipients.filter((x) => x !== r);
      return { success: true, id: r.id };
    }),
    BulkDeleteRecipients: wrap(
      'BulkDeleteRecipients',
      async (req: { projectId: string; ids: string[]; all: boolean }) => {
        const doomed = data.recipients.filter(
          (r) => r.projectId === req.projectId && (req.all || req.ids.includes(r.id)),
        );
        data.recipients = data.recipients.filter((r) => !doomed.includes(r));
        return {
          success: true,
          deleted: doomed.length,
          ids: doomed.map((r) => r.id),
          skippedCampaignIds: [],
        };
      },
    ),
    CountRecipients: wrap('CountRecipients', async (req: { projectId: string; campaignIds: string[] }) => ({
      counts: Object.fromEntries(
        req.campaignIds.map((id) => [id, data.recipients.filter((r) => r.campaignId === id).length]),
      ),
    })),
    ResolveLink: wrap('ResolveLink', async () => {
      throw new AppError('not_found');
    }),
  };
}

/** A running pair of test backends. */
export interface TestBackends {
  data: TestData;
  recipientAddr: string;
  campaignAddr: string;
  /** Stops the recipient backend only (to prove 503 when a backend is down). */
  stopRecipients: () => Promise<void>;
  stop: () => Promise<void>;
}

async function serve(add: (s: Server) => void): Promise<{ addr: string; stop: () => Promise<void> }> {
  const server = new Server();
  add(server);
  addGrpcHealth(server, new Lifecycle(logger));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  let stopped = false;
  return {
    addr: `127.0.0.1:${port}`,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      server.forceShutdown();
    },
  };
}

/**
 * Starts both test backends on free ports. With `withoutBatchedGets` the recipient backend has
 * no GetRecipients (grpc-js answers UNIMPLEMENTED), like a recipient service from before it.
 */
export async function startTestBackends(
  options: { withoutBatchedGets?: boolean } = {},
): Promise<TestBackends> {
  const data = new TestData();
  const campaigns = await serve((s) =>
    s.addService(loadCampaignsProto().outreach.v1.CampaignService.service, campaignService(data)),
  );
  const handlers: Record<string, unknown> = recipientService(data);
  if (options.withoutBatchedGets) delete handlers.GetRecipients;
  const recipients = await serve((s) =>
    s.addService(loadRecipientsProto().outreach.v1.RecipientService.service, handlers as never),
  );
  return {
    data,
    recipientAddr: recipients.addr,
    campaignAddr: campaigns.addr,
    stopRecipients: recipients.stop,
    stop: async () => {
      await Promise.all([recipients.stop(), campaigns.stop()]);
    },
  };
}
