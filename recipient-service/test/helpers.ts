import { credentials, Server, ServerCredentials, status } from '@grpc/grpc-js';
import {
  type CampaignSnapshot,
  loadCampaignsProto,
  loadRecipientsProto,
  subjects,
} from '@outreach/contracts';
import { AppError, callUnary, fromServiceError, publishJson } from '@outreach/platform';
import { connect, type NatsConnection } from 'nats';
import { Pool } from 'pg';
import { createTestNamespace, type TestNamespace } from '../../test/support/isolation';
import { start } from '../src/server';

/** A running recipient service in its own namespace, with a client and store handles. */
export interface Harness {
  ns: TestNamespace;
  campaignService: FakeCampaignService;
  /** host:port of the service's gRPC server. */
  address: string;
  /** The service's /metrics, when it was started with a METRICS_PORT. */
  metricsUrl?: string;
  pool: Pool;
  nc: NatsConnection;
  call: <T = Record<string, unknown>>(method: string, request: object) => Promise<T>;
  /** Calls and returns the AppError the call failed with (fails the test if it succeeds). */
  refusal: (method: string, request: object) => Promise<AppError>;
  publishCampaign: (campaign: Partial<CampaignSnapshot> & { id: string }) => Promise<CampaignSnapshot>;
  close: () => Promise<void>;
}

const HOUR = 3600_000;
const versions = new Map<string, number>();

/** A draft campaign snapshot, with any fact overridden. */
export function campaignSnapshot(c: Partial<CampaignSnapshot> & { id: string }): CampaignSnapshot {
  const version = c.version ?? (versions.get(c.id) ?? 0) + 1;
  versions.set(c.id, version);
  return {
    projectId: 'prj_test',
    name: `Campaign ${c.id}`,
    deviceId: 'dev_test',
    budgetMode: 'metered',
    startDate: new Date(Date.now() + 24 * HOUR).toISOString(),
    endDate: new Date(Date.now() + 48 * HOUR).toISOString(),
    launchedAt: null,
    haltedAt: null,
    recipientCap: null,
    pricePerConversation: null,
    fixedPrice: null,
    includedConversations: null,
    createdAt: new Date().toISOString(),
    ...c,
    version,
  };
}

/** Facts that make a campaign active now. */
export const ACTIVE = {
  launchedAt: new Date(Date.now() - 2 * HOUR).toISOString(),
  startDate: new Date(Date.now() - HOUR).toISOString(),
  endDate: new Date(Date.now() + 24 * HOUR).toISOString(),
};

/** Waits until `check` returns true (polling), or fails after `ms`. */
export async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition not reached in time');
}

/** Campaigns a stand-in CampaignService.GetCampaign and ListCampaigns answer with (GetCampaign: NOT_FOUND otherwise). */
export interface FakeCampaignService {
  campaigns: Map<string, Record<string, unknown>>;
  asked: string[];
  /** A gRPC status GetCampaign fails every call with while set. */
  failWith: { code: number | null };
  address: string;
  stop: () => void;
}

/**
 * A stand-in for the campaign service's gRPC GetCampaign and ListCampaigns, speaking the real
 * contract: what the recipient service asks when a campaign is not replicated yet, and before
 * each write. `publishCampaign` tells it each campaign it publishes; a test may then tell it
 * otherwise (a launch the replica has not heard of yet).
 */
async function startFakeCampaignService(): Promise<FakeCampaignService> {
  const campaigns = new Map<string, Record<string, unknown>>();
  const asked: string[] = [];
  const failWith: { code: number | null } = { code: null };
  const server = new Server();
  server.addService(loadCampaignsProto().outreach.v1.CampaignService.service, {
    GetCampaign: (
      call: { request: { projectId: string; campaignId: string } },
      cb: (err: object | null, res?: object) => void,
    ) => {
      asked.push(call.request.campaignId);
      if (failWith.code !== null) return cb({ code: failWith.code, details: 'failing as told' });
      const c = campaigns.get(call.request.campaignId);
      if (!c || c.projectId !== call.request.projectId) cb({ code: status.NOT_FOUND, details: 'not found' });
      else cb(null, c);
    },
    ListCampaigns: (
      call: { request: { projectId: string } },
      cb: (err: object | null, res?: object) => void,
    ) => {
      cb(null, { campaigns: [...campaigns.values()].filter((c) => c.projectId === call.request.projectId) });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { campaigns, asked, failWith, address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

/** Starts the service exactly as main does, with the namespace env and a free port. */
export async function startHarness(
  extraEnv: Record<string, string> = {},
  options: { eraseChunk?: number } = {},
): Promise<Harness> {
  const ns = await createTestNamespace();
  const campaignService = await startFakeCampaignService();
  const running = await start(
    {
      ...ns.env,
      RECIPIENT_GRPC_PORT: '0',
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: 'https://links.example.test',
      CAMPAIGN_SERVICE_ADDR: campaignService.address,
      ...extraEnv,
    },
    options,
  );
  // The latest version of each campaign the stand-in campaign service was told of.
  const told = new Map<string, number>();
  const Client = loadRecipientsProto().outreach.v1.RecipientService;
  const client = new Client(`127.0.0.1:${running.ports.grpc}`, credentials.createInsecure());
  const pool = new Pool({ connectionString: ns.databaseUrl, max: 2 });
  const nc = await connect({ servers: ns.env.NATS_URL });
  const js = nc.jetstream();

  const call = async <T>(method: string, request: object): Promise<T> => {
    try {
      return await callUnary<object, T>(client, method, request, { deadlineMs: 20_000 });
    } catch (err) {
      throw fromServiceError(err);
    }
  };
  return {
    ns,
    campaignService,
    address: `127.0.0.1:${running.ports.grpc}`,
    metricsUrl: running.ports.metrics ? `http://127.0.0.1:${running.ports.metrics}/metrics` : undefined,
    pool,
    nc,
    call,
    refusal: async (method, request) => {
      try {
        await call(method, request);
      } catch (err) {
        if (err instanceof AppError) return err;
        throw err;
      }
      throw new Error(`${method} succeeded but a refusal was expected`);
    },
    publishCampaign: async (c) => {
      const snapshot = campaignSnapshot(c);
      // As the real one, the campaign service knows the latest version it published (a test may
      // publish an older one late), and no longer a deleted campaign.
      const newest = snapshot.version > (told.get(snapshot.id) ?? Number.NEGATIVE_INFINITY);
      if (newest) {
        told.set(snapshot.id, snapshot.version);
        const { id, projectId, deviceId, startDate, endDate, launchedAt, haltedAt, recipientCap } = snapshot;
        if (snapshot.deletedAt) campaignService.campaigns.delete(id);
        else
          campaignService.campaigns.set(id, {
            id,
            projectId,
            deviceId,
            startDate,
            endDate,
            launchedAt,
            haltedAt,
            recipientCap,
          });
      }
      await publishJson(js, subjects(ns.natsPrefix).campaignState(snapshot.id), snapshot);
      await eventually(async () => {
        const { rows } = await pool.query('SELECT version FROM recipients.campaign_replicas WHERE id = $1', [
          snapshot.id,
        ]);
        return rows.length > 0 && Number(rows[0].version) >= snapshot.version;
      });
      return snapshot;
    },
    close: async () => {
      client.close();
      await nc.close();
      await pool.end();
      await running.stop();
      campaignService.stop();
      await ns.cleanup();
    },
  };
}

/** The JSON texts of create items. */
export const items = (...values: unknown[]): string[] => values.map((v) => JSON.stringify(v));
