import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import { UNNAMED_ACTOR } from '../activity/activity.service';
import type { CampaignDeps } from '../deps';
import type { RecipientsForwarder } from '../recipients/recipients.client';
import type { Form } from './forms';
import { type PageContext, SENT_BEFORE } from './layout';
import { listOperatorProjects, type Operator, requireMembership } from './operators.service';
import type { Session } from './sessions.service';

/** What the dashboard is built from. */
export interface DashboardDeps {
  domain: CampaignDeps;
  recipients: RecipientsForwarder;
  /** Mark cookies Secure (everywhere except local development over plain HTTP). Default true. */
  secureCookies?: boolean;
}

/** Per-request dashboard state on `ctx.state.dash`. */
export interface DashState {
  operator?: Operator;
  session?: Session;
  sessionId?: string;
  form?: Form;
}

/** The dashboard state of a request. */
export function dash(ctx: Context): DashState {
  ctx.state.dash ??= {};
  return ctx.state.dash as DashState;
}

/** The signed-in operator; the auth middleware guarantees one on protected routes. */
export function operatorOf(ctx: Context): Operator {
  const op = dash(ctx).operator;
  if (!op) throw new AppError('unauthorized', 'Sign in first.');
  return op;
}

/** The submitted form of a POST (parsed before the CSRF check). */
export function formOf(ctx: Context): Form {
  const form = dash(ctx).form;
  if (!form)
    throw new AppError('unsupported_media_type', 'Send the form as application/x-www-form-urlencoded.');
  return form;
}

/** The page context of a route outside any project. */
export async function baseContext(deps: DashboardDeps, ctx: Context): Promise<PageContext> {
  const operator = operatorOf(ctx);
  return {
    operator,
    csrfToken: dash(ctx).session?.csrfToken,
    projects: await listOperatorProjects(deps.domain, operator.id),
    sentBefore: ctx.query[SENT_BEFORE] === '1',
  };
}

/** The page context of a project route; 404 unless the operator is a member. */
export async function projectContext(
  deps: DashboardDeps,
  ctx: Context,
  section?: PageContext['section'],
): Promise<PageContext & { project: NonNullable<PageContext['project']> }> {
  const operator = operatorOf(ctx);
  const project = await requireMembership(deps.domain, operator.id, ctx.params.pid);
  return {
    operator,
    csrfToken: dash(ctx).session?.csrfToken,
    project,
    projects: await listOperatorProjects(deps.domain, operator.id),
    section,
    sentBefore: ctx.query[SENT_BEFORE] === '1',
  };
}

/** Sends a full HTML page. */
export function sendPage(ctx: Context, markup: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = markup;
}

/** The domain deps of a change an operator makes: the project's activity records it as theirs. */
export function actingAs(domain: CampaignDeps, who: { operator?: Pick<Operator, 'email'> }): CampaignDeps {
  return { ...domain, actor: who.operator?.email ?? UNNAMED_ACTOR };
}
