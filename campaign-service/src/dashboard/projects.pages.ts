import type Router from '@koa/router';
import { AppError } from '@outreach/platform';
import {
  baseContext,
  type DashboardDeps,
  dash,
  formOf,
  operatorOf,
  projectContext,
  sendPage,
} from './context';
import { html } from './html';
import { breadcrumbs, csrfField, field, layout, notice, projectPath, withErrorSummary } from './layout';
import { addProjectOperator, listProjectOperators, removeProjectOperator } from './operators.service';
import { MIN_PASSWORD_LENGTH } from './passwords';
import { setFlash, takeFlash } from './sessions.service';
import { formatInstant } from './time';

/** The home page (the operator's projects) and a project's operators. */
export function registerProjectRoutes(r: Router, deps: DashboardDeps): void {
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
    ? notice('warn', 'You are not a member of any project yet. Ask an operator of a project to add you.')
    : html`<ul class="cards">${projects.map(
        (p) => html`<li class="card"><h2><a href="${projectPath(p.id)}/campaigns">${p.name}</a></h2>
<p class="meta"><code>${p.id}</code></p></li>`,
      )}</ul>`
}`,
      ),
    );
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
      done?: 'added' | 'granted' | 'removed';
      who?: string;
    } = {},
  ) => {
    const pc = await projectContext(deps, ctx, 'members');
    const members = await listProjectOperators(deps.domain, pc.project.id);
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
${extra.done === 'added' ? notice('ok', `${extra.who ?? 'The new operator'} can now sign in and manage this project.`) : ''}
${extra.done === 'granted' ? notice('ok', `${extra.who ?? 'The operator'} already had an account and can now manage this project too; their password is unchanged.`) : ''}
${extra.done === 'removed' ? notice('ok', `${extra.who ?? 'The operator'} can no longer manage this project.`) : ''}
<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table><caption class="visually-hidden">Operators of this project</caption>
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
<h2>Add an operator</h2>
<p>Creates the account with the initial password you enter if it is new. An existing account keeps its own password, and is added only if you manage every project it manages; an Outreach administrator can add any other.</p>
${withErrorSummary(
  extra.errors ?? {},
  html`<form method="post" action="${projectPath(pc.project.id)}/members">
  ${csrfField(pc)}
  ${field({ name: 'email', label: 'E-mail address', type: 'email', value: extra.email, required: true, error: extra.errors?.email })}
  ${field({ name: 'password', label: 'Initial password (new accounts)', type: 'password', hint: `At least ${MIN_PASSWORD_LENGTH} characters; share it privately. Not used for an existing operator.`, error: extra.errors?.password, attrs: html` autocomplete="new-password"` })}
  <div class="actions"><button type="submit">Add operator</button></div>
</form>`,
)}`,
      ),
      extra.errors ? 400 : 200,
    );
  };

  r.get('/p/:pid/members', async (ctx) => {
    const done =
      ctx.query.done === 'added' || ctx.query.done === 'granted' || ctx.query.done === 'removed'
        ? ctx.query.done
        : undefined;
    // The address comes only once, from the session (a reload names no one, and says no more).
    const sessionId = dash(ctx).sessionId;
    const flash =
      done && sessionId
        ? await takeFlash<{ member?: { email: string; projectId: string } }>(deps.domain, sessionId)
        : null;
    await membersPage(ctx, {
      done,
      who: flash?.member?.projectId === ctx.params.pid ? flash.member.email : undefined,
    });
  });
  r.post('/p/:pid/members/:oid/remove', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'members');
    const { email } = await removeProjectOperator(deps.domain, pc.project.id, ctx.params.oid);
    ctx.status = 303;
    // Who removed themself has no access left here.
    if (ctx.params.oid === pc.operator?.id) return ctx.redirect('/dashboard');
    await setFlash(deps.domain, dash(ctx).sessionId!, {
      member: { email, projectId: pc.project.id },
    });
    ctx.redirect(`${projectPath(pc.project.id)}/members?done=removed`);
  });
  r.post('/p/:pid/members', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'members');
    const form = formOf(ctx);
    try {
      const { operator, created } = await addProjectOperator(deps.domain, {
        email: form.get('email'),
        password: form.get('password'),
        projectId: pc.project.id,
        byOperatorId: operatorOf(ctx).id,
      });
      // Post/redirect/get, so a reload neither sends the form again nor reports an account just
      // created as one that already existed. The address waits in the session's one-time slot,
      // not in the URL, where it would stay in the history and the logs.
      await setFlash(deps.domain, dash(ctx).sessionId!, {
        member: { email: operator.email, projectId: pc.project.id },
      });
      ctx.status = 303;
      ctx.redirect(`${projectPath(pc.project.id)}/members?done=${created ? 'added' : 'granted'}`);
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
