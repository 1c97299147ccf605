import type Router from '@koa/router';
import { SCOPES } from '@outreach/contracts';
import type { Context } from 'koa';
import {
  createApiKey,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  listApiKeys,
  revokeApiKey,
} from '../api-keys/api-keys.service';
import { compileAdminSchemas } from '../http/admin.schemas';
import { invalid } from '../problems';
import { fieldErrorsOf } from './campaigns.pages';
import { actingAs, type DashboardDeps, dash, formOf, projectContext, sendPage } from './context';
import { actOnce, onceField, RESENT } from './form-once';
import { type FieldErrors, type Form, intField } from './forms';
import { html, type SafeHtml } from './html';
import { csrfField, field, layout, notice, projectPath, withErrorSummary } from './layout';
import { setFlash, takeFlash } from './sessions.service';
import { formatInstant, isTimeZone, localToInstant } from './time';

/** What the operator typed in the create form, kept as text so a refused form shows it unchanged. */
interface ApiKeyFormValues {
  name: string;
  scopes: string[];
  expiresAt: string;
  rateLimitPerMinute: string;
}

const NEW_KEY: ApiKeyFormValues = {
  name: '',
  // Least privilege first: writing is a choice the operator makes.
  scopes: ['recipients:read'],
  expiresAt: '',
  rateLimitPerMinute: String(DEFAULT_RATE_LIMIT_PER_MINUTE),
};

/** Reads the create form; `input` is set only when the form itself has no errors. */
function parseApiKeyForm(
  form: Form,
  now: Date,
): {
  values: ApiKeyFormValues;
  input?: { name: string; scopes: string[]; expiresAt: string | null; rateLimitPerMinute: number };
  errors: FieldErrors;
} {
  const values: ApiKeyFormValues = {
    name: form.get('name').trim(),
    scopes: form.all('scopes'),
    expiresAt: form.get('expiresAt').trim(),
    rateLimitPerMinute: form.get('rateLimitPerMinute'),
  };
  const errors: FieldErrors = {};
  const rateLimitPerMinute = intField(form, 'rateLimitPerMinute', errors, { min: 1, max: 1_000_000 });
  let expiresAt: string | null = null;
  const tz = isTimeZone(form.get('timeZone')) ? form.get('timeZone') : 'UTC';
  if (values.expiresAt) {
    const at = localToInstant(values.expiresAt, tz);
    if (!at) errors.expiresAt = 'Enter a date and time, or leave it empty.';
    // The service refuses it too, but in the API's words; the form says it in the operator's.
    else if (at.getTime() <= now.getTime())
      errors.expiresAt = 'Choose a time in the future, or leave it empty.';
    else expiresAt = at.toISOString();
  }
  if (!values.name) errors.name = 'Enter a name.';
  if (values.scopes.length === 0) errors.scopes = 'Choose at least one scope.';
  if (Object.keys(errors).length) return { values, errors };
  return {
    values,
    errors,
    input: {
      name: values.name,
      scopes: values.scopes,
      expiresAt,
      rateLimitPerMinute: rateLimitPerMinute as number,
    },
  };
}

/** API keys: create with scopes, expiry and rate limit (shown once), list, revoke. */
export function registerApiKeyRoutes(r: Router, deps: DashboardDeps): void {
  const d = deps.domain;
  const check = compileAdminSchemas();
  const base = (pid: string) => `${projectPath(pid)}/api-keys`;

  const page = async (
    ctx: Context,
    extra: {
      created?: { key: string; name: string };
      errors?: FieldErrors;
      values?: ApiKeyFormValues;
      revoked?: boolean;
      resent?: boolean;
    } = {},
  ) => {
    const pc = await projectContext(deps, ctx, 'api-keys');
    const keys = await listApiKeys(d, pc.project.id);
    const tz = pc.operator?.timeZone ?? 'UTC';
    const now = d.clock().getTime();
    const errors = extra.errors ?? {};
    // A refused form comes back as the operator left it: reset scopes would silently widen the key.
    const v = extra.values ?? NEW_KEY;
    const status = (k: (typeof keys)[number]): SafeHtml =>
      k.revokedAt
        ? html`<span class="badge off">revoked</span>`
        : k.expiresAt && Date.parse(k.expiresAt) <= now
          ? html`<span class="badge off">expired</span>`
          : html`<span class="badge on">active</span>`;
    sendPage(
      ctx,
      layout(
        pc,
        'API Keys',
        html`<h1>API Keys</h1>
${
  extra.created
    ? html`<section class="notice ok" aria-labelledby="new-key-title">
<h2 id="new-key-title">Key “${extra.created.name}” created</h2>
<p><strong>Copy it now: it is shown only once.</strong> Only a hash is stored.</p>
<div class="secret"><output id="new-key">${extra.created.key}</output><button type="button" data-copy="new-key" hidden>Copy</button></div>
<p id="new-key-copied" role="status" class="meta"></p>
</section>`
    : ''
}
${extra.revoked ? notice('ok', 'Key revoked. Every gateway refuses it within a second.') : ''}
${extra.resent ? notice('warn', extra.created ? 'That form was sent twice: the key was created once, not again.' : 'That form had already been sent: its key was created then, once, and is listed below. It is not shown again; if no one copied it, revoke it and create another.') : ''}
${
  keys.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table><caption class="visually-hidden">API keys of this project</caption>
<thead><tr><th scope="col"><span class="visually-hidden">Actions</span></th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Rate limit</th><th scope="col">Expires</th><th scope="col">Last used</th></tr></thead>
<tbody>${keys.map(
        // Revoke first, then the name and status: on a phone the table scrolls sideways, and what
        // an operator comes to do (find a key, see if it works, revoke it) must be in sight.
        (
          k,
        ) => html`<tr><td>${k.revokedAt ? '' : html`<form method="post" action="${base(pc.project.id)}/${k.id}/revoke" data-confirm="Revoke the key ${k.name}? Clients using it stop working at once.">${csrfField(pc)}<button type="submit" class="danger">Revoke<span class="visually-hidden"> ${k.name}</span></button></form>`}</td>
<td>${k.name}</td><td>${status(k)}</td><td><code>${k.prefix}…</code></td><td>${k.scopes.join(', ')}</td><td class="num">${k.rateLimitPerMinute}/min</td>
<td>${k.expiresAt ? formatInstant(k.expiresAt, tz) : 'never'}</td><td>${k.lastUsedAt ? formatInstant(k.lastUsedAt, tz) : 'never'}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No keys yet.</p>`
}
<h2>Create a key</h2>
${withErrorSummary(
  errors,
  html`<form method="post" action="${base(pc.project.id)}" novalidate>
  ${csrfField(pc)}${onceField()}
  ${field({ name: 'name', label: 'Name', required: true, hint: 'What uses the key, e.g. “CRM sync”.', value: v.name, error: errors.name, attrs: html` maxlength="200"` })}
  <fieldset><legend>Scopes</legend>
    ${errors.scopes ? html`<p class="error" id="f-scopes" tabindex="-1">${errors.scopes}</p>` : ''}
    ${SCOPES.map((s) => html`<div class="check"><input type="checkbox" id="scope-${s.replace(':', '-')}" name="scopes" value="${s}"${v.scopes.includes(s) ? html` checked` : ''}><label for="scope-${s.replace(':', '-')}"><code>${s}</code> — ${s.endsWith('read') ? 'list and read recipients and campaigns' : 'create, update and delete recipients'}</label></div>`)}
  </fieldset>
  ${field({ name: 'expiresAt', label: 'Expires (optional)', type: 'datetime-local', hint: `In ${tz}. Leave empty for a key that does not expire.`, value: v.expiresAt, error: errors.expiresAt })}
  <input type="hidden" name="timeZone" value="${tz}">
  ${field({ name: 'rateLimitPerMinute', label: 'Rate limit (requests a minute)', type: 'number', value: v.rateLimitPerMinute, error: errors.rateLimitPerMinute, attrs: html` min="1" step="1" inputmode="numeric"` })}
  <div class="actions"><button type="submit">Create key</button></div>
</form>`,
)}`,
      ),
      Object.keys(errors).length ? 400 : 200,
    );
  };

  r.get('/p/:pid/api-keys', async (ctx) => {
    const sessionId = dash(ctx).sessionId;
    const flash = sessionId
      ? await takeFlash<{ newKey?: { key: string; name: string } }>(d, sessionId)
      : null;
    await page(ctx, {
      revoked: ctx.query.done === 'revoked',
      created: flash?.newKey,
      resent: ctx.query[RESENT] === '1',
    });
  });
  r.post('/p/:pid/api-keys', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'api-keys');
    // Once per form: the same form sent again (a double click, a retry) is answered with the
    // first one's page, never with a second key whose secret no one would ever see.
    await actOnce(d, ctx, async () => {
      const { values, input, errors } = parseApiKeyForm(formOf(ctx), d.clock());
      if (!input) {
        await page(ctx, { errors, values });
        return undefined;
      }
      try {
        const problems = check('create-api-key', input);
        if (problems.length) throw invalid(problems);
        const created = await createApiKey(actingAs(d, pc), pc.project.id, input);
        // Post/redirect/get, so a reload never creates a second key. The secret waits in the
        // session's one-time slot (read and cleared by the next page), never in a URL or a log.
        await setFlash(d, dash(ctx).sessionId!, { newKey: { key: created.key, name: created.name } });
        return base(pc.project.id);
      } catch (err) {
        await page(ctx, {
          values,
          errors: fieldErrorsOf(err, {
            '/name': 'name',
            '/scopes': 'scopes',
            '/expiresAt': 'expiresAt',
            '/rateLimitPerMinute': 'rateLimitPerMinute',
          }),
        });
        return undefined;
      }
    });
  });
  r.post('/p/:pid/api-keys/:kid/revoke', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'api-keys');
    await revokeApiKey(actingAs(d, pc), pc.project.id, ctx.params.kid);
    ctx.status = 303;
    ctx.redirect(`${base(pc.project.id)}?done=revoked`);
  });
}
