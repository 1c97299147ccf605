import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { type DashboardDeps, dash, formOf, sendPage } from './context';
import { readCookie, writeCookie } from './forms';
import { html } from './html';
import { field, layout, notice } from './layout';
import {
  authenticateOperator,
  claimSignInAttempt,
  clearSignInFailures,
  KNOWN_DEVICE_MAX_AGE_MS,
  rememberDevice,
} from './operators.service';
import { createSession, deleteSession, SESSION_MAX_AGE_MS } from './sessions.service';

/** Cookie with the session id (the database keeps only its hash). */
export const SESSION_COOKIE = 'outreach_session';
/** Cookie for the sign-in form's double-submit CSRF token (no session exists yet). */
export const LOGIN_CSRF_COOKIE = 'outreach_signin_csrf';
/**
 * Cookie that makes a browser a known device of the operator who last signed in on it (a random
 * token, stored only hashed): its sign-ins are exempt from the pause of the address by all clients.
 */
export const DEVICE_COOKIE = 'outreach_device';

/** Sets the known-device cookie (renewed at every sign-in from the device). */
export function writeDeviceCookie(ctx: Context, token: string, secure: boolean) {
  writeCookie(ctx, DEVICE_COOKIE, token, {
    secure,
    maxAgeSeconds: Math.floor(KNOWN_DEVICE_MAX_AGE_MS / 1000),
  });
}

/**
 * Whether the dashboard's cookies carry `Secure`: when the install is served over HTTPS, as its
 * public base URL says (the chart makes it https exactly when the Ingress has TLS). Browsers
 * drop a `Secure` cookie set over plain HTTP, so a trial install without TLS could not sign in.
 */
export function secureCookiesFor(publicBaseUrl: string): boolean {
  return new URL(publicBaseUrl).protocol === 'https:';
}

/** A same-site path to continue to after sign-in; anything else becomes the dashboard home. */
export function safeNext(next: string | undefined): string {
  return next && /^\/dashboard(\/[\w\-./?=&%]*)?$/.test(next) && !next.startsWith('//') ? next : '/dashboard';
}

/**
 * The double-submit token of a form sent without a session (sign-in, an invitation's), set in its
 * cookie. The cookie's token is kept while it holds one of ours (24 random bytes in base64url): a
 * new one per page would leave every such page loaded before the last unable to send, as when
 * several tabs reload onto sign-in once a session ends. Rewriting it only renews its lifetime;
 * the double submit still holds, since another site can neither read nor set the cookie.
 */
export function sessionlessFormToken(ctx: Context, secure: boolean): string {
  const held = readCookie(ctx, LOGIN_CSRF_COOKIE);
  const token = held && /^[\w-]{32}$/.test(held) ? held : randomBytes(24).toString('base64url');
  writeCookie(ctx, LOGIN_CSRF_COOKIE, token, { secure, maxAgeSeconds: 3600 });
  return token;
}

/**
 * Signs the operator in on this browser, as a sign-in that passed does: a fresh session (a
 * planted id can never become an authenticated one) and the known-device cookie.
 */
export async function startSession(ctx: Context, deps: DashboardDeps, operatorId: string): Promise<void> {
  const secure = deps.secureCookies ?? true;
  writeDeviceCookie(
    ctx,
    await rememberDevice(deps.domain, operatorId, readCookie(ctx, DEVICE_COOKIE)),
    secure,
  );
  const old = dash(ctx).sessionId;
  if (old) await deleteSession(deps.domain, old);
  const { id } = await createSession(deps.domain, operatorId);
  writeCookie(ctx, SESSION_COOKIE, id, { secure, maxAgeSeconds: Math.floor(SESSION_MAX_AGE_MS / 1000) });
  writeCookie(ctx, LOGIN_CSRF_COOKIE, '', { secure, maxAgeSeconds: 0 });
}

/** Sign-in and sign-out. */
export function registerAuthRoutes(r: Router, deps: DashboardDeps): void {
  const secure = deps.secureCookies ?? true;

  // `ended`: the guard sent here a form whose session had ended (endedSignIn in router.ts).
  const signInPage = (
    token: string,
    next: string,
    { email = '', failed = false, pausedSeconds = 0, ended = false } = {},
  ) =>
    layout(
      {},
      'Sign in',
      html`<h1>Sign in</h1>
${ended ? notice('warn', 'Your session ended, so what you just sent was not saved. Sign in and send it again.') : ''}
${failed ? notice('error', 'The e-mail address or the password is not correct.') : ''}
${pausedSeconds > 0 ? notice('error', `Too many failed sign-ins for this address. Try again in ${Math.ceil(pausedSeconds / 60)} minutes.`) : ''}
<form method="post" action="/dashboard/sign-in" class="narrow">
  <input type="hidden" name="_csrf" value="${token}">
  <input type="hidden" name="next" value="${next}">
  ${field({ name: 'email', label: 'E-mail address', type: 'email', value: email, required: true, attrs: html` autocomplete="username"` })}
  ${field({ name: 'password', label: 'Password', type: 'password', required: true, attrs: html` autocomplete="current-password"` })}
  <div class="actions"><button type="submit">Sign in</button></div>
</form>
<p class="hint">Forgot your password? Ask your Outreach administrator for a password reset link.</p>`,
    );

  const loginToken = (ctx: Context) => sessionlessFormToken(ctx, secure);

  r.get('/sign-in', async (ctx) => {
    if (dash(ctx).operator) return ctx.redirect(safeNext(ctx.query.next as string | undefined));
    const next = safeNext(ctx.query.next as string | undefined);
    sendPage(ctx, signInPage(loginToken(ctx), next, { ended: ctx.query.ended === '1' }));
  });

  r.post('/sign-in', async (ctx) => {
    const form = formOf(ctx);
    const email = form.get('email');
    const device = readCookie(ctx, DEVICE_COOKIE);
    const paused = await claimSignInAttempt(deps.domain, email, ctx.ip, device);
    if (paused > 0) {
      ctx.set('Retry-After', String(paused));
      return sendPage(
        ctx,
        signInPage(loginToken(ctx), safeNext(form.get('next')), { email, pausedSeconds: paused }),
        429,
      );
    }
    const operator = await authenticateOperator(deps.domain, email, form.get('password'));
    if (!operator) {
      ctx.state.log?.info({ event: 'sign_in_failed' }, 'dashboard sign-in refused');
      return sendPage(
        ctx,
        signInPage(loginToken(ctx), safeNext(form.get('next')), { email, failed: true }),
        401,
      );
    }
    await clearSignInFailures(deps.domain, email, ctx.ip, device);
    await startSession(ctx, deps, operator.id);
    ctx.status = 303;
    ctx.redirect(safeNext(form.get('next')));
  });

  r.post('/sign-out', async (ctx) => {
    const id = dash(ctx).sessionId;
    if (id) await deleteSession(deps.domain, id);
    writeCookie(ctx, SESSION_COOKIE, '', { secure, maxAgeSeconds: 0 });
    ctx.status = 303;
    ctx.redirect('/dashboard/sign-in');
  });
}
