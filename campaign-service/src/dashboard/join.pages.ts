import type Router from '@koa/router';
import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import { sessionlessFormToken, startSession } from './auth.pages';
import { type DashboardDeps, formOf, sendPage } from './context';
import type { FieldErrors } from './forms';
import { html } from './html';
import { acceptInvitation, invitationPath, openInvitation } from './invitations.service';
import { field, layout, projectPath, withErrorSummary } from './layout';
import { MIN_PASSWORD_LENGTH } from './passwords';
import { formatInstant } from './time';

/** Where an invitation link leads: `/dashboard/join/<token>`, open without a session. */
export const JOIN_PATH = /^\/dashboard\/join\/[^/]+$/;

/**
 * An invitation's link: the invited person chooses the password of their new account, and is
 * signed in on the project's pages. The link is the only proof asked (addresses are not
 * verified), so it works once, for a week, and only while its inviter manages the project.
 */
export function registerJoinRoutes(r: Router, deps: DashboardDeps): void {
  const secure = deps.secureCookies ?? true;

  const page = async (ctx: Context, errors: FieldErrors = {}, status = 200) => {
    const invitation = await openInvitation(deps.domain, ctx.params.token);
    const title = `Join ${invitation.projectName}`;
    sendPage(
      ctx,
      layout(
        {},
        title,
        html`<h1>${title}</h1>
<p>${invitation.invitedBy} invited you to manage the project <strong>${invitation.projectName}</strong> on Outreach. Choose the password of your account; no one else knows it. This link works once, until ${formatInstant(invitation.expiresAt.toISOString(), 'UTC')}.</p>
${withErrorSummary(
  errors,
  html`<form method="post" action="${invitationPath(ctx.params.token)}" novalidate class="narrow">
  <input type="hidden" name="_csrf" value="${sessionlessFormToken(ctx, secure)}">
  ${field({ name: 'email', label: 'E-mail address', type: 'email', value: invitation.email, attrs: html` readonly autocomplete="username"` })}
  ${field({ name: 'password', label: 'Password', type: 'password', required: true, hint: `At least ${MIN_PASSWORD_LENGTH} characters.`, error: errors.password, attrs: html` autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}"` })}
  ${field({ name: 'confirmPassword', label: 'Password again', type: 'password', required: true, error: errors.confirmPassword, attrs: html` autocomplete="new-password"` })}
  <div class="actions"><button type="submit">Create my account</button></div>
</form>`,
)}`,
      ),
      status,
    );
  };

  r.get('/join/:token', (ctx) => page(ctx));
  r.post('/join/:token', async (ctx) => {
    const form = formOf(ctx);
    const password = form.get('password');
    const errors: FieldErrors = {};
    if (password.length < MIN_PASSWORD_LENGTH)
      errors.password = `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
    else if (form.get('confirmPassword') !== password)
      errors.confirmPassword = 'Type the password again, exactly as above.';
    if (Object.keys(errors).length) return page(ctx, errors, 400);
    let joined: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      joined = await acceptInvitation(deps.domain, ctx.params.token, password);
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_request')
        return page(ctx, { password: err.message }, 400);
      throw err;
    }
    ctx.state.log?.info(
      { event: 'invitation_accepted', operatorId: joined.operator.id },
      'operator joined by invitation',
    );
    await startSession(ctx, deps, joined.operator.id);
    ctx.status = 303;
    ctx.redirect(`${projectPath(joined.projectId)}/campaigns`);
  });
}
