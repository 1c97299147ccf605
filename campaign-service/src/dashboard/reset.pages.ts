import type Router from '@koa/router';
import type { Context } from 'koa';
import { DEVICE_COOKIE, sessionlessFormToken, startSession } from './auth.pages';
import { type DashboardDeps, formOf, sendPage } from './context';
import { type FieldErrors, readCookie } from './forms';
import { html } from './html';
import { layout } from './layout';
import { clearSignInFailures } from './operators.service';
import { choosePasswordForm, chosenPassword } from './password-form';
import { openPasswordReset, passwordResetPath, resetPassword } from './password-resets.service';
import { formatInstant } from './time';

/** Where a password reset link leads: `/dashboard/reset-password/<token>`, open without a session. */
export const RESET_PATH = /^\/dashboard\/reset-password\/[^/]+$/;

/**
 * A password reset link, which an administrator made for an operator who forgot their password:
 * its holder chooses a new one and is signed in. Every other session and known device of the
 * account ends, as with any change of password.
 */
export function registerResetRoutes(r: Router, deps: DashboardDeps): void {
  const secure = deps.secureCookies ?? true;

  const page = async (ctx: Context, errors: FieldErrors = {}, status = 200) => {
    const reset = await openPasswordReset(deps.domain, ctx.params.token);
    sendPage(
      ctx,
      layout(
        {},
        'Choose a new password',
        html`<h1>Choose a new password</h1>
<p>For the account <strong>${reset.email}</strong>. Once it is set, every other session of the account ends: other browsers and devices must sign in again, with the new password. This link works once, until ${formatInstant(reset.expiresAt.toISOString(), 'UTC')}.</p>
${choosePasswordForm({
  action: passwordResetPath(ctx.params.token),
  csrf: sessionlessFormToken(ctx, secure),
  email: reset.email,
  errors,
  label: 'New password',
  submit: 'Set the password',
})}`,
      ),
      status,
    );
  };

  r.get('/reset-password/:token', (ctx) => page(ctx));
  r.post('/reset-password/:token', async (ctx) => {
    const { password, errors } = chosenPassword(formOf(ctx));
    if (Object.keys(errors).length) return page(ctx, errors, 400);
    const operator = await resetPassword(deps.domain, ctx.params.token, password);
    ctx.state.log?.info(
      { event: 'password_reset', operatorId: operator.id },
      'operator password reset by link',
    );
    // The link proved the account's owner as a right password does: this client's failures go.
    await clearSignInFailures(deps.domain, operator.email, ctx.ip, readCookie(ctx, DEVICE_COOKIE));
    await startSession(ctx, deps, operator.id);
    ctx.status = 303;
    ctx.redirect('/dashboard/account?done=reset');
  });
}
