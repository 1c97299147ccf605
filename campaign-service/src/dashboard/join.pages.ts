import type Router from '@koa/router';
import type { Context } from 'koa';
import { sessionlessFormToken, startSession } from './auth.pages';
import { type DashboardDeps, formOf, sendPage } from './context';
import type { FieldErrors } from './forms';
import { html } from './html';
import { acceptInvitation, invitationPath, openInvitation } from './invitations.service';
import { layout, projectPath } from './layout';
import { choosePasswordForm, chosenPassword } from './password-form';
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
${choosePasswordForm({
  action: invitationPath(ctx.params.token),
  csrf: sessionlessFormToken(ctx, secure),
  email: invitation.email,
  errors,
  label: 'Password',
  submit: 'Create my account',
})}`,
      ),
      status,
    );
  };

  r.get('/join/:token', (ctx) => page(ctx));
  r.post('/join/:token', async (ctx) => {
    const { password, errors } = chosenPassword(formOf(ctx));
    if (Object.keys(errors).length) return page(ctx, errors, 400);
    const joined = await acceptInvitation(deps.domain, ctx.params.token, password);
    ctx.state.log?.info(
      { event: 'invitation_accepted', operatorId: joined.operator.id },
      'operator joined by invitation',
    );
    await startSession(ctx, deps, joined.operator.id);
    ctx.status = 303;
    ctx.redirect(`${projectPath(joined.projectId)}/campaigns`);
  });
}
