import type Router from '@koa/router';
import type { Context } from 'koa';
import { DEVICE_COOKIE, SESSION_COOKIE, writeDeviceCookie } from './auth.pages';
import { baseContext, type DashboardDeps, dash, formOf, operatorOf, sendPage } from './context';
import { type FieldErrors, readCookie, writeCookie } from './forms';
import { html } from './html';
import { csrfField, field, layout, notice, withErrorSummary } from './layout';
import {
  changeOperatorPassword,
  claimSignInAttempt,
  clearSignInFailures,
  rememberDevice,
} from './operators.service';
import { MIN_PASSWORD_LENGTH } from './passwords';
import {
  createSession,
  endOtherSessions,
  otherSessions,
  SESSION_IDLE_MS,
  SESSION_MAX_AGE_MS,
  setFlash,
  takeFlash,
} from './sessions.service';
import { formatInstant } from './time';

/**
 * The signed-in operator's account: their own password. The current password is asked for and
 * counted as a sign-in attempt (same throttle), so a session left open cannot be used to guess it
 * or to lock its owner out for good; a change ends every other session of the operator and forgets
 * their known devices (this browser becomes one again). The page also lists the operator's other
 * sessions, which "Sign out everywhere else" ends, the password kept.
 */
export function registerAccountRoutes(r: Router, deps: DashboardDeps): void {
  const secure = deps.secureCookies ?? true;

  const page = async (ctx: Context, errors: FieldErrors = {}, status = 200) => {
    const pc = await baseContext(deps, ctx);
    const done = ctx.query.done;
    const others = await otherSessions(deps.domain, operatorOf(ctx).id, dash(ctx).sessionId ?? '');
    const tz = pc.operator?.timeZone ?? 'UTC';
    // How many sessions ended, told once through the session's flash (a reload says less).
    const ended =
      done === 'signed-out'
        ? await takeFlash<{ ended: number }>(deps.domain, dash(ctx).sessionId ?? '')
        : null;
    sendPage(
      ctx,
      layout(
        pc,
        'Your account',
        html`<h1>Your account</h1>
${done === 'changed' ? notice('ok', 'Your password was changed. Every other session of yours has ended: other browsers and devices must sign in again, with the new password. This one goes on.') : ''}
${done === 'signed-out' ? notice('ok', ended ? `Signed out everywhere else: ${ended.ended} session${ended.ended === 1 ? '' : 's'} ended. This one goes on.` : 'Signed out everywhere else. This session goes on.') : ''}
${done === 'reset' ? notice('ok', 'Your new password is set, and you are signed in. Every other session of yours has ended: other browsers and devices must sign in again, with the new password.') : ''}
<p>Signed in as <strong>${pc.operator?.email ?? ''}</strong>.</p>
<h2>Change your password</h2>
${withErrorSummary(
  errors,
  html`<form method="post" action="/dashboard/account" novalidate class="narrow">
  ${csrfField(pc)}
  ${field({ name: 'currentPassword', label: 'Current password', type: 'password', required: true, error: errors.currentPassword, attrs: html` autocomplete="current-password"` })}
  ${field({ name: 'newPassword', label: 'New password', type: 'password', required: true, hint: `At least ${MIN_PASSWORD_LENGTH} characters.`, error: errors.newPassword, attrs: html` autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}"` })}
  ${field({ name: 'confirmPassword', label: 'New password again', type: 'password', required: true, error: errors.confirmPassword, attrs: html` autocomplete="new-password"` })}
  <p class="hint">Changing it signs you out everywhere else.</p>
  <div class="actions"><button type="submit">Change password</button><a class="button secondary" href="/dashboard">Cancel</a></div>
</form>`,
)}
<h2>Where you are signed in</h2>
${
  others.count === 0
    ? html`<p>Only here: no other browser or device has a session of yours open.</p>`
    : html`<p>Besides this one, ${others.count} session${others.count === 1 ? ' is' : 's are'} open${others.count > others.latest.length ? html`; the ${others.latest.length} used most recently are listed` : ''}. A session ends ${SESSION_MAX_AGE_MS / 3600_000} hours after its sign-in, or after ${SESSION_IDLE_MS / 3600_000} hours unused.</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Sessions, scrolls sideways"><table><caption class="visually-hidden">Your other sessions</caption>
<thead><tr><th scope="col">Signed in</th><th scope="col">Last used</th></tr></thead>
<tbody>${others.latest.map((s) => html`<tr><td>${formatInstant(s.startedAt, tz)}</td><td>${formatInstant(s.lastSeenAt, tz)}</td></tr>`)}</tbody></table></div>
<form method="post" action="/dashboard/account/sign-out-others" data-confirm="Sign out every other browser and device? Your password stays.">
  ${csrfField(pc)}
  <p class="hint">A phone lost, a browser left signed in elsewhere: end their sessions here. Your password stays; change it too if someone else may know it.</p>
  <div class="actions"><button type="submit" class="danger">Sign out everywhere else</button></div>
</form>`
}`,
      ),
      status,
    );
  };

  r.get('/account', (ctx) => page(ctx));
  r.post('/account/sign-out-others', async (ctx) => {
    const sessionId = dash(ctx).sessionId ?? '';
    const ended = await endOtherSessions(deps.domain, operatorOf(ctx).id, sessionId);
    ctx.state.log?.info({ event: 'other_sessions_ended', ended }, 'operator signed out everywhere else');
    await setFlash(deps.domain, sessionId, { ended });
    ctx.status = 303;
    ctx.redirect('/dashboard/account?done=signed-out');
  });
  r.post('/account', async (ctx) => {
    const operator = operatorOf(ctx);
    const form = formOf(ctx);
    const current = form.get('currentPassword');
    const next = form.get('newPassword');
    const errors: FieldErrors = {};
    // The form's own checks first: a typing slip in the new password spends no attempt.
    if (!current) errors.currentPassword = 'Enter your current password.';
    if (next.length < MIN_PASSWORD_LENGTH)
      errors.newPassword = `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
    else if (next === current) errors.newPassword = 'Choose a password other than your current one.';
    else if (form.get('confirmPassword') !== next)
      errors.confirmPassword = 'Type the new password again, exactly as above.';
    if (Object.keys(errors).length) return page(ctx, errors, 400);

    const device = readCookie(ctx, DEVICE_COOKIE);
    const paused = await claimSignInAttempt(deps.domain, operator.email, ctx.ip, device);
    if (paused > 0) {
      ctx.set('Retry-After', String(paused));
      const minutes = Math.ceil(paused / 60);
      errors.currentPassword = `Too many wrong passwords for this account. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
      return page(ctx, errors, 429);
    }
    if (!(await changeOperatorPassword(deps.domain, operator.id, current, next))) {
      ctx.state.log?.info({ event: 'password_change_refused' }, 'dashboard password change refused');
      return page(ctx, { currentPassword: 'This is not your current password.' }, 400);
    }
    await clearSignInFailures(deps.domain, operator.email, ctx.ip, device);
    // The change forgot every known device of the operator: this browser, which just proved the
    // new password's owner, becomes one again under a new token.
    writeDeviceCookie(ctx, await rememberDevice(deps.domain, operator.id, undefined), secure);
    // Every session ended with the change, this one too: it goes on under a fresh id.
    const { id } = await createSession(deps.domain, operator.id);
    dash(ctx).sessionId = id;
    writeCookie(ctx, SESSION_COOKIE, id, { secure, maxAgeSeconds: Math.floor(SESSION_MAX_AGE_MS / 1000) });
    ctx.status = 303;
    ctx.redirect('/dashboard/account?done=changed');
  });
}
