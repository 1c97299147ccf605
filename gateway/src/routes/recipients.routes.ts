import type Router from '@koa/router';
import {
  type AllowanceMessage,
  LIMITS,
  type RecipientMessage,
  toAllowance,
  toListEntry,
} from '@outreach/contracts';
import { forwardedOf, jsonText, methodNotAllowed, nulCharacter, tagSpan } from '@outreach/platform';
import type { Context, Middleware } from 'koa';
import type { Backends } from '../clients';
import type { IdempotencyState } from '../middleware/idempotency';
import { jsonBody } from '../middleware/json-body';
import { projectIsolation } from '../middleware/project-isolation';
import { requireScope } from '../middleware/require-scope';
import { check, noQuery } from './validate';

export const RECIPIENTS_PATH = '/api/v1/projects/:projectId/recipients';
export const RECIPIENT_PATH = '/api/v1/projects/:projectId/recipients/:recipientId';
export const BULK_DELETE_PATH = '/api/v1/projects/:projectId/recipients/bulk-delete';

/** The recipient endpoints; `idempotency` guards every POST and PATCH. */
export function recipientRoutes(router: Router, backends: Backends, idempotency: Middleware): void {
  const read = [projectIsolation, requireScope('recipients:read')];
  const write = [projectIsolation, requireScope('recipients:write')];
  const withBody = [...write, noQuery, idempotency, jsonBody];

  router.post(RECIPIENTS_PATH, ...withBody, async (ctx) => {
    const body = ctx.state.body;
    check('create-request', body);
    const { campaignId, items } = body as { campaignId: string; items: unknown[] };
    tagSpan({ campaignId });
    const idempotency = ctx.state.idempotency as IdempotencyState | undefined;
    const res = await backends.recipients<{ created: number; bodyJson: string; replayed: boolean }>(
      'CreateRecipients',
      {
        projectId: ctx.params.projectId,
        campaignId,
        itemsJson: items.map((i) => jsonText(i)),
        wantBodyJson: true,
        idempotencyKey: idempotency?.key ?? '',
        fingerprint: idempotency?.fingerprint ?? '',
      },
      forwardedOf(ctx),
    );
    ctx.status = res.created > 0 ? 201 : 422;
    if (res.replayed) ctx.set('Idempotent-Replayed', 'true');
    // Rendered by the recipient service with the shared mapper (toCreateResponse).
    ctx.type = 'application/json';
    ctx.body = res.bodyJson;
  });

  router.post(BULK_DELETE_PATH, ...withBody, async (ctx) => {
    const body = ctx.state.body;
    check('bulk-delete', body);
    const { ids, all } = body as { ids?: string[]; all?: true };
    const res = await backends.recipients<{
      success: boolean;
      deleted: number;
      ids: string[];
      skippedCampaignIds: string[];
    }>(
      'BulkDeleteRecipients',
      { projectId: ctx.params.projectId, ids: ids ?? [], all: all === true },
      forwardedOf(ctx),
    );
    ctx.body = {
      success: res.success,
      deleted: res.deleted,
      ids: res.ids,
      ...(all === true ? { skippedCampaignIds: res.skippedCampaignIds } : {}),
    };
  });
  // Without this, other methods on bulk-delete would match `/recipients/:recipientId`.
  router.all(BULK_DELETE_PATH, (ctx) => {
    throw methodNotAllowed(ctx.method, ['POST']);
  });

  router.get(RECIPIENTS_PATH, ...read, async (ctx) => {
    const query: Record<string, unknown> = { ...ctx.query };
    check('list-query', query, 'query');
    const projectId = ctx.params.projectId;
    const campaignId = query.campaignId as string;
    tagSpan({ campaignId });
    const limit = (query.limit as number | undefined) ?? LIMITS.listDefault;
    const offset = (query.offset as number | undefined) ?? 0;
    const active = query.active === undefined ? undefined : query.active === 'true';
    const forwarded = forwardedOf(ctx);
    const [list, allowance] = await Promise.all([
      backends.recipients<{ total: number; recipients: RecipientMessage[] }>(
        'ListRecipients',
        { projectId, campaignId, limit, offset, active },
        forwarded,
      ),
      backends.campaigns<AllowanceMessage>('GetAllowance', { projectId, campaignId }, forwarded),
    ]);
    ctx.body = {
      projectId,
      campaignId,
      total: list.total,
      limit,
      offset,
      allowance: toAllowance(allowance),
      recipients: list.recipients.map(toListEntry),
    };
  });

  router.get(RECIPIENT_PATH, ...read, noQuery, async (ctx) => {
    const r = await backends.getRecipient(ctx.params.projectId, recipientIdOf(ctx), forwardedOf(ctx));
    ctx.body = toListEntry(r);
  });

  router.patch(RECIPIENT_PATH, ...withBody, async (ctx) => {
    // The recipient service owns the update rules; it needs the body exactly as sent.
    const r = await backends.recipients<RecipientMessage>(
      'UpdateRecipient',
      {
        projectId: ctx.params.projectId,
        recipientId: recipientIdOf(ctx),
        patchJson: jsonText(ctx.state.body ?? null),
      },
      forwardedOf(ctx),
    );
    ctx.body = toListEntry(r);
  });

  router.delete(RECIPIENT_PATH, ...write, noQuery, async (ctx) => {
    const res = await backends.recipients<{ success: boolean; id: string }>(
      'DeleteRecipient',
      { projectId: ctx.params.projectId, recipientId: recipientIdOf(ctx) },
      forwardedOf(ctx),
    );
    ctx.body = { success: res.success, id: res.id };
  });
}

/**
 * The recipient id of the path. One holding NUL is refused here: reads that arrive together
 * share one query, which PostgreSQL would fail for all of them.
 */
function recipientIdOf(ctx: Context): string {
  const id = ctx.params.recipientId as string;
  if (id.includes('\0')) throw nulCharacter();
  return id;
}
