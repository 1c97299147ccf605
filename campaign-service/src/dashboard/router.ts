import Router from '@koa/router';
import { AppError, requestError } from '@outreach/platform';
import type { Context, Middleware } from 'koa';
import { registerAccountRoutes } from './account.pages';
import { registerActivityRoutes } from './activity.pages';
import { registerApiKeyRoutes } from './api-keys.pages';
import { APP_JS } from './assets.script';
import { APP_CSS } from './assets.styles';
import { LOGIN_CSRF_COOKIE, registerAuthRoutes, SESSION_COOKIE } from './auth.pages';
import { registerBillingRoutes } from './billing.pages';
import { registerCampaignRoutes } from './campaigns.pages';
import { type DashboardDeps, dash, sendPage } from './context';
import { registerDeviceRoutes } from './devices.pages';
import { formPageOf } from './form-once';
import { FORM_BYTES, OPERATOR_FORM_BYTES, readCookie, readForm } from './forms';
import { html } from './html';
import { JOIN_PATH, registerJoinRoutes } from './join.pages';
import { layout, notice } from './layout';
import { getOperator } from './operators.service';
import { registerProjectRoutes } from './projects.pages';
import { registerRecipientRoutes } from './recipients.pages';
import { pageHint } from './refusals';
import { RESET_PATH, registerResetRoutes } from './reset.pages';
import { setSecurityHeaders } from './security';
import { csrfMatches, findSession } from './sessions.service';
import { registerTimeZoneRoutes } from './time-zone.pages';

export type { DashboardDeps } from './context';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const PUBLIC_PATHS = new Set(['/dashboard/sign-in', '/dashboard/assets/app.css', '/dashboard/assets/app.js']);
/** A link's page, which its token opens without a session: an invitation's, a password reset's. */
const isLinkPage = (path: string) => JOIN_PATH.test(path) || RESET_PATH.test(path);

const wantsJson = (ctx: Context) =>
  ctx.path.endsWith('.json') || ctx.get('accept').startsWith('application/json');

function csrfRefusal(): AppError {
  return new AppError('forbidden', 'The form has expired or did not come from the dashboard.', {
    hint: 'Reload the page and submit it again.',
    details: { reason: 'csrf' },
  });
}

/** Loads the session, checks the origin and CSRF token of every mutation, and requires sign-in. */
function guard(deps: DashboardDeps): Middleware {
  return async (ctx, next) => {
    const state = dash(ctx);
    const sessionId = readCookie(ctx, SESSION_COOKIE);
    if (sessionId) {
      const session = await findSession(deps.domain, sessionId);
      const operator = session ? await getOperator(deps.domain, session.operatorId) : null;
      if (session && operator) Object.assign(state, { session, sessionId, operator });
    }
    if (!SAFE_METHODS.has(ctx.method)) {
      // A cross-site Origin is refused outright; SameSite=Lax already keeps the cookie off it.
      const origin = ctx.get('origin');
      if (origin && origin !== 'null') {
        let host = '';
        try {
          host = new URL(origin).host;
        } catch {
          // unparseable origin: refused below
        }
        if (host !== ctx.host) throw csrfRefusal();
      } else if (origin === 'null') throw csrfRefusal();
      if (ctx.is('application/x-www-form-urlencoded')) {
        state.form = await readForm(ctx, state.session ? OPERATOR_FORM_BYTES : FORM_BYTES);
      }
      const presented = ctx.get('x-csrf-token') || state.form?.get('_csrf');
      // No session exists yet on these forms: theirs is the sign-in form's double-submit token.
      if (ctx.path === '/dashboard/sign-in' || isLinkPage(ctx.path)) {
        const expected = readCookie(ctx, LOGIN_CSRF_COOKIE);
        if (!expected || !csrfMatches(expected, presented)) throw csrfRefusal();
      } else {
        if (!state.session) throw new AppError('unauthorized', 'Your session has ended. Sign in again.');
        if (!csrfMatches(state.session.csrfToken, presented)) throw csrfRefusal();
      }
    }
    if (!state.operator && !PUBLIC_PATHS.has(ctx.path) && !isLinkPage(ctx.path)) {
      if (SAFE_METHODS.has(ctx.method) && !wantsJson(ctx)) {
        ctx.redirect(`/dashboard/sign-in?next=${encodeURIComponent(ctx.originalUrl)}`);
        return;
      }
      throw new AppError('unauthorized', 'Your session has ended. Sign in again.');
    }
    await next();
  };
}

/**
 * Sign-in for a form sent after its session ended: the page says what was sent is lost, and
 * signing in leads back to the page it was sent from (its Referer, when of this origin).
 */
function endedSignIn(ctx: Context): string {
  return `/dashboard/sign-in?ended=1&next=${encodeURIComponent(formPageOf(ctx))}`;
}

/** Renders a refusal as a page (or JSON for the import endpoint), never with internals. */
function renderError(ctx: Context, err: unknown): void {
  const e = requestError(ctx, err);
  if (e.spec.httpStatus >= 500) ctx.state.log?.error({ err }, 'dashboard request failed');
  if (wantsJson(ctx)) {
    ctx.status = e.spec.httpStatus;
    ctx.body = e.toBody();
    return;
  }
  if (e.code === 'unauthorized') {
    // A sign-out whose session had already ended lost nothing.
    const lost = !SAFE_METHODS.has(ctx.method) && ctx.path !== '/dashboard/sign-out';
    ctx.status = 303;
    ctx.redirect(lost ? endedSignIn(ctx) : '/dashboard/sign-in');
    return;
  }
  const title =
    e.code === 'not_found' ? 'Not found' : e.spec.httpStatus >= 500 ? 'Something went wrong' : 'Not possible';
  const operator = dash(ctx).operator;
  const hint = pageHint(e);
  sendPage(
    ctx,
    layout(
      { operator, csrfToken: dash(ctx).session?.csrfToken },
      title,
      html`<h1>${title}</h1>${notice('error', e.message)}
${hint ? html`<p>${hint}</p>` : ''}${e.spec.httpStatus >= 500 ? html`<p class="meta">Reference: <code>${ctx.state.requestId}</code></p>` : ''}
<p><a href="/dashboard">Back to the dashboard</a></p>`,
    ),
    e.spec.httpStatus,
  );
}

/**
 * The operator dashboard: server-rendered pages under /dashboard (and `/` redirects there).
 * Mount it in the campaign service's HTTP app before the admin API; other paths pass through.
 */
export function dashboardRoutes(deps: DashboardDeps): Middleware {
  const r = new Router({ prefix: '/dashboard', sensitive: true });
  r.get('/assets/app.css', (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = APP_CSS;
  });
  r.get('/assets/app.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = APP_JS;
  });
  registerAuthRoutes(r, deps);
  registerJoinRoutes(r, deps);
  registerResetRoutes(r, deps);
  registerProjectRoutes(r, deps);
  registerCampaignRoutes(r, deps);
  registerDeviceRoutes(r, deps);
  registerApiKeyRoutes(r, deps);
  registerRecipientRoutes(r, deps);
  registerBillingRoutes(r, deps);
  registerTimeZoneRoutes(r, deps);
  registerAccountRoutes(r, deps);
  registerActivityRoutes(r, deps);
  const routes = r.routes();
  const check = guard(deps);

  return async (ctx, next) => {
    if (ctx.path === '/') return ctx.redirect('/dashboard');
    if (ctx.path !== '/dashboard' && !ctx.path.startsWith('/dashboard/')) return next();
    setSecurityHeaders(ctx);
    try {
      await check(ctx, () =>
        routes(ctx as Parameters<typeof routes>[0], async () => {
          throw new AppError('not_found', 'There is no such page.');
        }),
      );
    } catch (err) {
      renderError(ctx, err);
    }
  };
}
