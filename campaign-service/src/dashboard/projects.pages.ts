import type Router from '@koa/router';
import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import { compileAdminSchemas } from '../http/admin.schemas';
import { renameProject } from '../projects/projects.service';
import {
  actingAs,
  baseContext,
  type DashboardDeps,
  dash,
  formOf,
  operatorOf,
  projectContext,
  sendPage,
} from './context';
import { NAME_MESSAGES } from './device-errors';
import { actOnce, onceField } from './form-once';
import type { FieldErrors } from './forms';
import { html } from './html';
import { invitationPath, inviteOperator, listInvitations, withdrawInvitation } from './invitations.service';
import { breadcrumbs, csrfField, field, layout, notice, projectPath, withErrorSummary } from './layout';
import {
  addProjectOperator,
  createOperatorProject,
  listProjectOperators,
  projectLimitReached,
  removeProjectOperator,
} from './operators.service';
import { setFlash, takeFlash } from './sessions.service';
import { formatInstant } from './time';

// What the Operators page may say after a change (`?done=`).
const MEMBERS_DONE = ['invited', 'granted', 'removed', 'withdrawn', 'renamed'] as const;
type MembersDone = (typeof MEMBERS_DONE)[number];

/** The session's one-time slot after a change of the operators: whom it was, and a new invitation's link. */
interface MembersFlash {
  member?: { email: string; projectId: string; link?: string; expiresAt?: string };
}

/** What the new-project and rename forms hint about a name. */
const NAME_HINT = 'Up to 200 characters; operators see it in the header of every page of the project.';

/** The home page (the operator's projects), a new project, a project's operators and its name. */
export function registerProjectRoutes(r: Router, deps: DashboardDeps): void {
  const check = compileAdminSchemas();
  /** A project name as the admin API checks it (`create-project`), its problems in words. */
  const projectName = (raw: string): { name: string; errors: FieldErrors } => {
    // Trimmed, as every name the dashboard's forms take.
    const name = raw.trim();
    const errors: FieldErrors = {};
    for (const p of check('create-project', { name }))
      errors.name ??= NAME_MESSAGES[p.rule] ?? `The name ${p.message}.`;
    return { name, errors };
  };

  r.get('/', async (ctx) => {
    const pc = await baseContext(deps, ctx);
    const projects = pc.projects ?? [];
    if (projects.length === 1) return ctx.redirect(`${projectPath(projects[0].id)}/campaigns`);
    sendPage(
      ctx,
      layout(
        pc,
        'Projects',
        html`<h1>Your projects</h1>
${
  projects.length === 0
    ? notice(
        'warn',
        'You are not a member of any project yet. Create one, or ask an operator of a project to add you.',
      )
    : html`<ul class="cards">${projects.map(
        (p) => html`<li class="card"><h2><a href="${projectPath(p.id)}/campaigns">${p.name}</a></h2>
<p class="meta"><code>${p.id}</code></p></li>`,
      )}</ul>`
}
<div class="actions"><a class="button" href="/dashboard/projects/new">New project</a></div>`,
      ),
    );
  });

  const newProjectPage = async (ctx: Context, v: { name?: string; errors?: FieldErrors } = {}) => {
    const pc = await baseContext(deps, ctx);
    const errors = v.errors ?? {};
    // Said before the name is typed rather than after it is sent (the POST checks it again).
    const managed = pc.projects?.length ?? 0;
    const limit = deps.domain.operatorProjectLimit;
    const refusal = managed >= limit ? projectLimitReached(limit, managed) : undefined;
    sendPage(
      ctx,
      layout(
        pc,
        'New project',
        html`${breadcrumbs([
          ['Projects', '/dashboard'],
          ['New project', null],
        ])}
<h1>New project</h1>
<p>A project holds its own devices, campaigns, API keys and billing. You become its operator, and can add colleagues on its Operators page.</p>
${
  refusal
    ? html`${notice('warn', refusal.message)}<p>${refusal.hint}</p>`
    : withErrorSummary(
        errors,
        html`<form method="post" action="/dashboard/projects">
  ${csrfField(pc)}${onceField()}
  ${field({ name: 'name', label: 'Project name', value: v.name, required: true, hint: NAME_HINT, error: errors.name, attrs: html` maxlength="200" autocomplete="off"` })}
  <div class="actions"><button type="submit">Create project</button></div>
</form>`,
      )
}`,
      ),
      Object.keys(errors).length ? (refusal ? 409 : 400) : 200,
    );
  };

  r.get('/projects/new', (ctx) => newProjectPage(ctx));
  // A refused form's page is answered from this address: opened again, it leads to the form.
  r.get('/projects', (ctx) => ctx.redirect('/dashboard/projects/new'));
  r.post('/projects', async (ctx) => {
    const operator = operatorOf(ctx);
    const form = formOf(ctx);
    // Once per form: the same form sent again (a double click, a retry) makes no second project.
    await actOnce(deps.domain, ctx, async () => {
      const { name, errors } = projectName(form.get('name'));
      if (Object.keys(errors).length) {
        await newProjectPage(ctx, { name: form.get('name'), errors });
        return undefined;
      }
      const project = await createOperatorProject(actingAs(deps.domain, { operator }), operator.id, { name });
      return `${projectPath(project.id)}/campaigns?done=project-created`;
    });
  });

  r.get('/p/:pid', async (ctx) => {
    await projectContext(deps, ctx);
    ctx.redirect(`${projectPath(ctx.params.pid)}/campaigns`);
  });

  const membersPage = async (
    ctx: Parameters<Router.Middleware>[0],
    extra: {
      errors?: Record<string, string>;
      email?: string;
      done?: MembersDone;
      who?: string;
      /** The invitation just made, from the session's one-time slot: its link is shown only then. */
      invited?: { email: string; link: string; expiresAt: string };
      renameErrors?: FieldErrors;
      renameValue?: string;
    } = {},
  ) => {
    const pc = await projectContext(deps, ctx, 'members');
    const members = await listProjectOperators(deps.domain, pc.project.id);
    const invitations = await listInvitations(deps.domain, pc.project.id);
    const tz = pc.operator?.timeZone ?? 'UTC';
    sendPage(
      ctx,
      layout(
        pc,
        'Operators',
        html`${breadcrumbs([
          [pc.project.name, `${projectPath(pc.project.id)}/campaigns`],
          ['Operators', null],
        ])}
<h1>Operators</h1>
${
  extra.invited
    ? html`<section class="notice ok" aria-labelledby="invite-title">
<h2 id="invite-title">${extra.invited.email} is invited</h2>
<p><strong>Pass this link on to them privately: it is shown only once.</strong> Whoever opens it chooses the account's password and manages this project. It works once, until ${formatInstant(extra.invited.expiresAt, tz)}.</p>
<div class="secret"><output id="invite-link">${extra.invited.link}</output><button type="button" data-copy="invite-link" hidden>Copy</button></div>
<p id="invite-link-copied" role="status" class="meta"></p>
</section>`
    : extra.done === 'invited'
      ? notice(
          'ok',
          'The invitation was made. Its link was shown only once: if no one copied it, invite the address again for a new link (the one before stops working).',
        )
      : ''
}
${extra.done === 'withdrawn' ? notice('ok', `The invitation of ${extra.who ?? 'that address'} was withdrawn: its link no longer works.`) : ''}
${extra.done === 'granted' ? notice('ok', `${extra.who ?? 'The operator'} already had an account and can now manage this project too; their password is unchanged.`) : ''}
${extra.done === 'removed' ? notice('ok', `${extra.who ?? 'The operator'} can no longer manage this project.`) : ''}
${extra.done === 'renamed' ? notice('ok', 'Project renamed.') : ''}
<div class="table-wrap" tabindex="0" role="region" aria-label="Operators, scrolls sideways"><table><caption class="visually-hidden">Operators of this project</caption>
<thead><tr><th scope="col">E-mail</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${members.map(
          (m) =>
            html`<tr><td>${m.email}</td><td>${formatInstant(m.createdAt, tz)}</td><td>${
              members.length > 1
                ? html`<form method="post" action="${projectPath(pc.project.id)}/members/${m.id}/remove" data-confirm="Remove ${m.email} from this project? Their access ends at once; an operator left with no project is deleted.">${csrfField(pc)}<button type="submit" class="danger">Remove<span class="visually-hidden"> ${m.email}</span></button></form>`
                : ''
            }</td></tr>`,
        )}</tbody></table></div>
${members.length === 1 ? html`<p class="meta">A project keeps at least one operator: add another before removing this one.</p>` : ''}
${
  invitations.length
    ? html`<h2>Invitations</h2>
<div class="table-wrap" tabindex="0" role="region" aria-label="Invitations, scrolls sideways"><table><caption class="visually-hidden">Invitations open</caption>
<thead><tr><th scope="col"><span class="visually-hidden">Actions</span></th><th scope="col">E-mail</th><th scope="col">Invited by</th><th scope="col">Link works until</th></tr></thead>
<tbody>${invitations.map(
        (i) =>
          html`<tr><td><form method="post" action="${projectPath(pc.project.id)}/invitations/${i.id}/withdraw" data-confirm="Withdraw the invitation of ${i.email}? Its link stops working at once.">${csrfField(pc)}<button type="submit" class="danger">Withdraw<span class="visually-hidden"> the invitation of ${i.email}</span></button></form></td><td>${i.email}</td><td>${i.invitedBy}</td><td>${formatInstant(i.expiresAt.toISOString(), tz)}</td></tr>`,
      )}</tbody></table></div>`
    : ''
}
<h2>Add an operator</h2>
<p>An address with an account is added at once, keeping its own password, if you manage every project it manages; an Outreach administrator can add any other. For a new address you get an invitation link to pass on: whoever opens it chooses the password, so no one else knows it.</p>
${withErrorSummary(
  extra.errors ?? {},
  html`<form method="post" action="${projectPath(pc.project.id)}/members">
  ${csrfField(pc)}
  ${field({ name: 'email', label: 'E-mail address', type: 'email', value: extra.email, required: true, error: extra.errors?.email })}
  <div class="actions"><button type="submit">Add operator</button></div>
</form>`,
)}
<h2 id="project-name">Project name</h2>
<p>Renames the project for every operator of it; its id, <code>${pc.project.id}</code>, stays the same.</p>
${withErrorSummary(
  extra.renameErrors ?? {},
  html`<form method="post" action="${projectPath(pc.project.id)}/name">
  ${csrfField(pc)}
  ${field({ name: 'name', label: 'Project name', value: extra.renameValue ?? pc.project.name, required: true, hint: NAME_HINT, error: extra.renameErrors?.name, attrs: html` maxlength="200" autocomplete="off"` })}
  <div class="actions"><button type="submit">Rename project</button></div>
</form>`,
)}`,
      ),
      extra.errors || extra.renameErrors ? 400 : 200,
    );
  };

  r.get('/p/:pid/members', async (ctx) => {
    const done = MEMBERS_DONE.find((d) => d === ctx.query.done);
    // The address (and a new invitation's link) comes only once, from the session: a reload names
    // no one, and says no more.
    const sessionId = dash(ctx).sessionId;
    const flash =
      done && done !== 'renamed' && sessionId ? await takeFlash<MembersFlash>(deps.domain, sessionId) : null;
    const here = flash?.member?.projectId === ctx.params.pid ? flash.member : undefined;
    await membersPage(ctx, {
      done,
      who: here?.email,
      invited:
        done === 'invited' && here?.link && here.expiresAt
          ? { email: here.email, link: here.link, expiresAt: here.expiresAt }
          : undefined,
    });
  });
  r.post('/p/:pid/name', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'members');
    const form = formOf(ctx);
    const { name, errors } = projectName(form.get('name'));
    if (Object.keys(errors).length)
      return membersPage(ctx, { renameErrors: errors, renameValue: form.get('name') });
    await renameProject(actingAs(deps.domain, pc), pc.project.id, { name });
    ctx.status = 303;
    ctx.redirect(`${projectPath(pc.project.id)}/members?done=renamed`);
  });
  // A refused rename's page is answered from this address: opened again, it leads to the form.
  r.get('/p/:pid/name', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'members');
    ctx.redirect(`${projectPath(pc.project.id)}/members#project-name`);
  });
  r.post('/p/:pid/members/:oid/remove', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'members');
    const { email } = await removeProjectOperator(actingAs(deps.domain, pc), pc.project.id, ctx.params.oid);
    ctx.status = 303;
    // Who removed themself has no access left here.
    if (ctx.params.oid === pc.operator?.id) return ctx.redirect('/dashboard');
    await setFlash(deps.domain, dash(ctx).sessionId!, {
      member: { email, projectId: pc.project.id },
    });
    ctx.redirect(`${projectPath(pc.project.id)}/members?done=removed`);
  });
  r.post('/p/:pid/invitations/:iid/withdraw', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'members');
    const { email } = await withdrawInvitation(deps.domain, pc.project.id, ctx.params.iid);
    await setFlash(deps.domain, dash(ctx).sessionId!, {
      member: { email, projectId: pc.project.id },
    } satisfies MembersFlash);
    ctx.status = 303;
    ctx.redirect(`${projectPath(pc.project.id)}/members?done=withdrawn`);
  });
  r.post('/p/:pid/members', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'members');
    const form = formOf(ctx);
    const asked = { email: form.get('email'), projectId: pc.project.id, byOperatorId: operatorOf(ctx).id };
    try {
      const operator = await addProjectOperator(actingAs(deps.domain, pc), asked);
      const invitation = operator ? undefined : await inviteOperator(actingAs(deps.domain, pc), asked);
      // Post/redirect/get, so a reload neither sends the form again nor makes another link. The
      // address and the link wait in the session's one-time slot (sealed), not in the URL, where
      // they would stay in the history and the logs.
      const member: MembersFlash['member'] = invitation
        ? {
            email: invitation.email,
            projectId: pc.project.id,
            // The host the operator reached the dashboard at: the colleague opens the same.
            link: `${ctx.protocol}://${ctx.host}${invitationPath(invitation.token)}`,
            expiresAt: invitation.expiresAt.toISOString(),
          }
        : { email: operator!.email, projectId: pc.project.id };
      await setFlash(deps.domain, dash(ctx).sessionId!, { member } satisfies MembersFlash);
      ctx.status = 303;
      ctx.redirect(`${projectPath(pc.project.id)}/members?done=${invitation ? 'invited' : 'granted'}`);
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_request') {
        const problems =
          (err.details as { problems?: { pointer: string; message: string }[] }).problems ?? [];
        const errors = Object.fromEntries(
          problems.map((p) => [p.pointer.slice(1), `The ${p.pointer.slice(1)} ${p.message}.`]),
        );
        return membersPage(ctx, { errors, email: form.get('email') });
      }
      throw err;
    }
  });
}
