import type { Server } from '@grpc/grpc-js';
import {
  CAMPAIGN_STATES,
  type CampaignMessage,
  type CampaignState,
  loadCampaignsProto,
} from '@outreach/contracts';
import { AppError, type ServiceMetrics, unary } from '@outreach/platform';
import { verifyApiKeyHash } from '../api-keys/api-keys.service';
import { type CampaignView, getAllowance, getCampaign, listCampaigns } from '../campaigns/campaigns.service';
import type { CampaignDeps } from '../deps';

/** A campaign as the gRPC message; optional fields are left out when unset. */
export function toCampaignMessage(c: CampaignView): Partial<CampaignMessage> {
  const t = c.timing;
  return {
    id: c.id,
    projectId: c.projectId,
    name: c.name,
    state: c.state,
    budgetMode: c.budgetMode,
    deviceId: c.deviceId,
    startDate: c.startDate,
    endDate: c.endDate,
    timing: {
      state: t.state,
      now: t.now,
      ...(t.startsInSeconds !== null && { startsInSeconds: t.startsInSeconds }),
      ...(t.runningForSeconds !== null && { runningForSeconds: t.runningForSeconds }),
      ...(t.endedAgoSeconds !== null && { endedAgoSeconds: t.endedAgoSeconds }),
    } as CampaignMessage['timing'],
    ...(c.recipientCap !== null && { recipientCap: c.recipientCap }),
    ...(c.launchedAt !== null && { launchedAt: c.launchedAt }),
    ...(c.haltedAt !== null && { haltedAt: c.haltedAt }),
    createdAt: c.createdAt,
  };
}

function required(value: string, field: string): string {
  if (!value) {
    throw new AppError('invalid_request', `${field} is required.`, {
      details: { problems: [{ pointer: `/${field}`, rule: 'required', message: 'is required' }] },
    });
  }
  return value;
}

/** Registers CampaignService on `server`, with per-method metrics. */
export function addCampaignService(server: Server, deps: CampaignDeps, metrics: ServiceMetrics): void {
  const proto = loadCampaignsProto();
  const measured = <Req, Res>(method: string, fn: (req: Req) => Promise<Res>) =>
    unary<Req, Res>(deps.logger, method, fn, metrics);

  server.addService(proto.outreach.v1.CampaignService.service, {
    ListCampaigns: measured('ListCampaigns', async (req: { projectId: string; state?: string }) => {
      const projectId = required(req.projectId, 'projectId');
      if (req.state !== undefined && !CAMPAIGN_STATES.includes(req.state as CampaignState)) {
        throw new AppError('invalid_request', 'state must be one of draft, upcoming, active, completed.', {
          details: { problems: [{ pointer: '/state', rule: 'enum', message: 'must be a campaign state' }] },
        });
      }
      const campaigns = await listCampaigns(deps, projectId, req.state as CampaignState | undefined);
      return { campaigns: campaigns.map(toCampaignMessage) };
    }),
    GetCampaign: measured('GetCampaign', async (req: { projectId: string; campaignId: string }) =>
      toCampaignMessage(
        await getCampaign(deps, required(req.projectId, 'projectId'), required(req.campaignId, 'campaignId')),
      ),
    ),
    GetAllowance: measured('GetAllowance', async (req: { projectId: string; campaignId: string }) => {
      const a = await getAllowance(
        deps,
        required(req.projectId, 'projectId'),
        required(req.campaignId, 'campaignId'),
      );
      return {
        used: a.used,
        exhausted: a.exhausted,
        ...(a.included !== null && { included: a.included }),
        ...(a.remaining !== null && { remaining: a.remaining }),
      };
    }),
    VerifyApiKey: measured('VerifyApiKey', async (req: { keyHash: string }) => {
      if (!/^[0-9a-f]{64}$/.test(req.keyHash)) {
        throw new AppError('unauthorized', 'The API key is not valid.', {
          headers: { 'WWW-Authenticate': 'Bearer' },
        });
      }
      const g = await verifyApiKeyHash(deps, req.keyHash);
      return {
        keyId: g.keyId,
        projectId: g.projectId,
        scopes: g.scopes,
        rateLimitPerMinute: g.rateLimitPerMinute,
        ...(g.expiresAt !== null && { expiresAt: g.expiresAt }),
      };
    }),
  });
}
