import Router from '@koa/router';
import type { CampaignState } from '@outreach/contracts';
import { AppError, readJsonBody } from '@outreach/platform';
import type { Context } from 'koa';
import { ADMIN_API_ACTOR, listActivity } from '../activity/activity.service';
import { createApiKey, listApiKeys, revokeApiKey } from '../api-keys/api-keys.service';
import { getCampaignStatement, getProjectStatement } from '../billing/statements.service';
import {
  addTopOff,
  createCampaign,
  deleteCampaign,
  getCampaign,
  haltCampaign,
  launchCampaign,
  listCampaigns,
  updateCampaign,
} from '../campaigns/campaigns.service';
import {
  invitationPath,
  inviteOperator,
  listInvitations,
  withdrawInvitation,
} from '../dashboard/invitations.service';
import { grantProjects, listProjectOperators, removeProjectOperator } from '../dashboard/operators.service';
import { issuePasswordReset, passwordResetPath } from '../dashboard/password-resets.service';
import type { CampaignDeps } from '../deps';
import { createDevice, deleteDevice, getDevice, listDevices, updateDevice } from '../devices/devices.service';
import { invalid } from '../problems';
import { createProject, getProject, listProjects } from '../projects/projects.service';
import { previewSystemPrompt } from '../recipients/prompt-preview';
import type { RecipientsForwarder } from '../recipients/recipients.client';
import { type AdminSchema, compileAdminSchemas } from './admin.schemas';

/**
 * The admin API under /admin/v1. Handlers are thin: validate, call the domain module,
 * shape the status. The dashboard calls the same domain modules.
 */
export function adminRouter(domain: CampaignDeps, recipients: RecipientsForwarder): Router {
  // One shared token, no person: the project's activity records its changes as the admin API's.
  const deps: CampaignDeps = { ...domain, actor: ADMIN_API_ACTOR };
  const check = compileAdminSchemas();
  const body = async <T>(ctx: Context, schema: AdminSchema): Promise<T> => {
    const data = (await readJsonBody(ctx)) ?? {};
    const problems = check(schema, data);
    if (problems.length > 0) throw invalid(problems);
    return data as T;
  };
  const query = <T>(ctx: Context, schema: AdminSchema): T => {
    const data: Record<string, unknown> = { ...ctx.query };
    const problems = check(schema, data);
    if (problems.length > 0) throw invalid(problems);
    return data as T;
  };
  const rid = (ctx: Context) => ctx.state.requestId as string;

  // Paths are matched as written, as the public API's are: @koa/router would otherwise also
  // answer them in other letters and with a trailing slash.
  const r = new Router({ prefix: '/admin/v1', sensitive: true, strict: true });

  r.post('/projects', async (ctx) => {
    ctx.status = 201;
    ctx.body = await createProject(deps, await body(ctx, 'create-project'));
  });
  r.get('/projects', async (ctx) => {
    ctx.body = { projects: await listProjects(deps) };
  });

  r.get('/projects/:p', async (ctx) => {
    ctx.body = await getProject(deps, ctx.params.p);
  });

  // Operators of a project: an invitation for a new address (its link's path, shown only here),
  // or an existing account added. The dashboard offers both on the project's Operators page.
  r.post('/projects/:p/invitations', async (ctx) => {
    const { email } = await body<{ email: string }>(ctx, 'operator-address');
    const invitation = await inviteOperator(deps, { email, projectId: ctx.params.p });
    ctx.status = 201;
    ctx.body = {
      email: invitation.email,
      path: invitationPath(invitation.token),
      expiresAt: invitation.expiresAt.toISOString(),
    };
  });
  r.get('/projects/:p/invitations', async (ctx) => {
    await getProject(deps, ctx.params.p);
    const invitations = await listInvitations(deps, ctx.params.p);
    ctx.body = {
      invitations: invitations.map((i) => ({
        id: i.id,
        email: i.email,
        invitedBy: i.invitedBy,
        expiresAt: i.expiresAt.toISOString(),
      })),
    };
  });
  r.delete('/projects/:p/invitations/:id', async (ctx) => {
    const { email } = await withdrawInvitation(deps, ctx.params.p, ctx.params.id);
    ctx.body = { success: true, id: ctx.params.id, email };
  });
  r.post('/projects/:p/operators', async (ctx) => {
    const { email } = await body<{ email: string }>(ctx, 'operator-address');
    const operator = await grantProjects(deps, email, [ctx.params.p]);
    ctx.body = { id: operator.id, email: operator.email };
  });
  r.get('/projects/:p/operators', async (ctx) => {
    await getProject(deps, ctx.params.p);
    const operators = await listProjectOperators(deps, ctx.params.p);
    ctx.body = { operators: operators.map((o) => ({ id: o.id, email: o.email })) };
  });
  // Someone who left: their access ends with their next request; an account left with no
  // project is deleted. A project's last operator stays (409 last_operator).
  r.delete('/projects/:p/operators/:id', async (ctx) => {
    const removed = await removeProjectOperator(deps, ctx.params.p, ctx.params.id);
    ctx.body = {
      success: true,
      id: ctx.params.id,
      email: removed.email,
      accountDeleted: removed.accountDeleted,
    };
  });

  // An operator who forgot their password: a link whose holder chooses a new one (its path shown
  // only here). Accounts are not a project's, so neither is this.
  r.post('/password-resets', async (ctx) => {
    const { email, signOut } = await body<{ email: string; signOut?: boolean }>(ctx, 'password-reset');
    const reset = await issuePasswordReset(deps, email, { signOut });
    ctx.state.log?.info(
      { event: 'password_reset_issued', operatorId: reset.operatorId, signedOut: signOut === true },
      'password reset link made through the admin API',
    );
    ctx.status = 201;
    ctx.body = {
      email: reset.email,
      path: passwordResetPath(reset.token),
      expiresAt: reset.expiresAt.toISOString(),
    };
  });

  r.post('/projects/:p/api-keys', async (ctx) => {
    ctx.status = 201;
    ctx.body = await createApiKey(deps, ctx.params.p, await body(ctx, 'create-api-key'));
  });
  r.get('/projects/:p/api-keys', async (ctx) => {
    ctx.body = { apiKeys: await listApiKeys(deps, ctx.params.p) };
  });
  r.delete('/projects/:p/api-keys/:id', async (ctx) => {
    ctx.body = await revokeApiKey(deps, ctx.params.p, ctx.params.id);
  });

  r.post('/projects/:p/devices', async (ctx) => {
    ctx.status = 201;
    ctx.body = await createDevice(deps, ctx.params.p, await body(ctx, 'create-device'));
  });
  r.get('/projects/:p/devices', async (ctx) => {
    ctx.body = { devices: await listDevices(deps, ctx.params.p) };
  });
  r.get('/projects/:p/devices/:id', async (ctx) => {
    ctx.body = await getDevice(deps, ctx.params.p, ctx.params.id);
  });
  r.delete('/projects/:p/devices/:id', async (ctx) => {
    await deleteDevice(deps, ctx.params.p, ctx.params.id);
    ctx.body = { success: true, id: ctx.params.id };
  });
  r.patch('/projects/:p/devices/:id', async (ctx) => {
    ctx.body = await updateDevice(deps, ctx.params.p, ctx.params.id, await body(ctx, 'patch-device'));
  });

  r.post('/projects/:p/campaigns', async (ctx) => {
    ctx.status = 201;
    ctx.body = await createCampaign(deps, ctx.params.p, await body(ctx, 'create-campaign'));
  });
  r.get('/projects/:p/campaigns', async (ctx) => {
    const q = query<{ state?: CampaignState }>(ctx, 'campaign-list-query');
    ctx.body = { campaigns: await listCampaigns(deps, ctx.params.p, q.state) };
  });
  r.get('/projects/:p/campaigns/:id', async (ctx) => {
    ctx.body = await getCampaign(deps, ctx.params.p, ctx.params.id);
  });
  r.patch('/projects/:p/campaigns/:id', async (ctx) => {
    ctx.body = await updateCampaign(deps, ctx.params.p, ctx.params.id, await body(ctx, 'patch-campaign'));
  });
  r.delete('/projects/:p/campaigns/:id', async (ctx) => {
    await deleteCampaign(deps, ctx.params.p, ctx.params.id);
    ctx.body = { success: true, id: ctx.params.id };
  });
  r.post('/projects/:p/campaigns/:id/launch', async (ctx) => {
    ctx.body = await launchCampaign(deps, ctx.params.p, ctx.params.id);
  });
  r.post('/projects/:p/campaigns/:id/halt', async (ctx) => {
    ctx.body = await haltCampaign(deps, ctx.params.p, ctx.params.id);
  });
  r.post('/projects/:p/campaigns/:id/top-offs', async (ctx) => {
    const input = await body<{ conversations: number; pricePerConversation?: number }>(ctx, 'create-top-off');
    ctx.status = 201;
    ctx.body = await addTopOff(deps, ctx.params.p, ctx.params.id, input);
  });
  r.get('/projects/:p/campaigns/:id/statement', async (ctx) => {
    const q = query<{ month: string }>(ctx, 'statement-query');
    ctx.body = await getCampaignStatement(deps, ctx.params.p, ctx.params.id, q.month);
  });
  r.get('/projects/:p/statement', async (ctx) => {
    const q = query<{ month: string }>(ctx, 'statement-query');
    ctx.body = await getProjectStatement(deps, ctx.params.p, q.month);
  });

  r.get('/projects/:p/activity', async (ctx) => {
    const q = query<{ limit?: number; before?: number }>(ctx, 'activity-query');
    await getProject(deps, ctx.params.p);
    ctx.body = await listActivity(deps.pool, ctx.params.p, { limit: q.limit ?? 50, before: q.before });
  });

  // Recipients: forwarded to RecipientService, which owns their rules (editability, caps).
  r.get('/projects/:p/campaigns/:id/recipients', async (ctx) => {
    const q = query<{ limit?: number; offset?: number; active?: boolean }>(ctx, 'recipient-list-query');
    await getCampaign(deps, ctx.params.p, ctx.params.id);
    ctx.body = await recipients.list(
      ctx.params.p,
      ctx.params.id,
      { limit: q.limit ?? 50, offset: q.offset ?? 0, active: q.active },
      rid(ctx),
    );
  });
  r.get('/projects/:p/recipients/:rid/prompt', async (ctx) => {
    const sample = String(ctx.query.sample ?? '').slice(0, 2000);
    const preview = await previewSystemPrompt(
      deps,
      recipients,
      ctx.params.p,
      ctx.params.rid,
      sample,
      rid(ctx),
    );
    ctx.body = {
      recipientId: preview.recipientId,
      deviceId: preview.deviceId,
      injectionMode: preview.injectionMode,
      knowledgeTitles: preview.knowledge.map((k) => k.title),
      systemPrompt: preview.systemPrompt,
    };
  });
  r.post('/projects/:p/campaigns/:id/recipients', async (ctx) => {
    const input = await body<{ items: unknown[] }>(ctx, 'create-recipients');
    await getCampaign(deps, ctx.params.p, ctx.params.id);
    const result = await recipients.create(ctx.params.p, ctx.params.id, input.items, rid(ctx));
    ctx.status = result.created > 0 ? 201 : 422;
    ctx.body = result;
  });
  const recipientOfCampaign = async (ctx: Context) => {
    const found = await recipients.get(ctx.params.p, ctx.params.rid, rid(ctx));
    if (found.campaignId !== ctx.params.id) {
      throw new AppError('not_found', 'Recipient not found in this campaign.', {
        details: { recipientId: ctx.params.rid },
      });
    }
  };
  r.patch('/projects/:p/campaigns/:id/recipients/:rid', async (ctx) => {
    const patch = (await readJsonBody(ctx)) ?? {};
    await recipientOfCampaign(ctx);
    ctx.body = await recipients.update(ctx.params.p, ctx.params.rid, patch, rid(ctx));
  });
  r.delete('/projects/:p/campaigns/:id/recipients/:rid', async (ctx) => {
    await recipientOfCampaign(ctx);
    ctx.body = await recipients.remove(ctx.params.p, ctx.params.rid, rid(ctx));
  });

  return r;
}
