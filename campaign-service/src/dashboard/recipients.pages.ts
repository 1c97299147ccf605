import type Router from '@koa/router';
import { type CreateResultJson, isEditable, LIMITS, type RecipientJson } from '@outreach/contracts';
import { AppError, readJsonBody, recipientsNotEditable } from '@outreach/platform';
import type { Context } from 'koa';
import { type CampaignView, getCampaign } from '../campaigns/campaigns.service';
import { getDevice } from '../devices/devices.service';
import { promptFor } from '../recipients/prompt-preview';
import { type DashboardDeps, formOf, projectContext, sendPage } from './context';
import type { FieldErrors, Form } from './forms';
import { html, type SafeHtml } from './html';
import {
  breadcrumbs,
  csrfField,
  field,
  layout,
  notice,
  type PageContext,
  pageQuery,
  pager,
  projectPath,
  recipientBadge,
  select,
  stateBadge,
  textarea,
  withErrorSummary,
} from './layout';
import {
  EDIT_FIELDS,
  formValuesFrom,
  formValuesOf,
  limitError,
  patchFieldErrors,
  type RecipientFormValues,
  recipientPatch,
  SHOWN_PREFIX,
  shownValuesFrom,
} from './recipient-edit';
import {
  CREATE_FIELDS,
  capRefusalInWords,
  problemsInWords,
  recipientFieldErrors,
  schemaFieldErrors,
} from './recipient-errors';
import { formatInstant } from './time';

/** A recipient as the forwarder returns it (the shared JSON shape). */
type RecipientView = RecipientJson;

/** One create result; an error's details as RecipientService reports them. */
type CreateResult = CreateResultJson & { details?: Record<string, unknown> };

/** Page size of the recipient list. */
const PAGE = 50;

type ProjectPage = PageContext & { project: NonNullable<PageContext['project']> };

const campaignPath = (pid: string, cid: string) => `${projectPath(pid)}/campaigns/${encodeURIComponent(cid)}`;

const editableNote = (c: CampaignView) =>
  isEditable(c.state)
    ? html``
    : notice(
        'warn',
        `The campaign is ${c.state}: recipients can no longer be created or changed (the same rule as the API). A recipient's link can still be disabled, or the recipient deleted with their data, on the recipient's page.`,
      );

/**
 * Edit, disable (or enable) and delete. While the campaign is not editable the API refuses them
 * all; the dashboard still lets an operator close a link or delete a recipient (a customer who
 * asks to be left alone or forgotten), so only Edit stays visible but disabled, with the reason.
 */
export function recipientActions(
  pc: PageContext,
  c: Pick<CampaignView, 'state'>,
  x: Pick<RecipientView, 'isActive'>,
  rpath: string,
): SafeHtml {
  const editable = isEditable(c.state);
  const confirm = editable
    ? 'Delete this recipient? Its link stops working for good.'
    : `Delete this recipient and erase their data? Their link stops working for good and a conversation in progress ends; conversations already held stay counted.`;
  return html`<div class="actions">
  ${editable ? html`<a class="button secondary" href="${rpath}/edit">Edit</a>` : html`<button type="button" class="secondary" disabled aria-describedby="recipient-actions-why">Edit</button>`}
  <form method="post" action="${rpath}/${x.isActive ? 'disable' : 'enable'}">${csrfField(pc)}<button type="submit" class="secondary">${x.isActive ? 'Disable' : 'Enable'}</button></form>
  <form method="post" action="${rpath}/delete" data-confirm="${confirm}">${csrfField(pc)}<button type="submit" class="danger">Delete</button></form>
</div>
${editable ? '' : html`<p class="meta" id="recipient-actions-why">Editing is not possible while the campaign is ${c.state}: recipients can be changed only while it is draft or upcoming. Disabling the link and deleting the recipient still are.</p>`}`;
}

/** The instructions and limits fieldsets, the same on the new and the edit form. */
function settingsFields(v: (k: string) => string, errors: FieldErrors, instructionsHint: string): SafeHtml {
  return html`<fieldset><legend>Instructions</legend>
    ${select({
      name: 'injectionMode',
      label: 'Mode',
      options: [
        ['append', 'Append to the device instructions'],
        ['replace', 'Replace the device instructions'],
      ],
      value: v('injectionMode') || 'append',
      error: errors.injectionMode,
    })}
    ${textarea({ name: 'injectionInstructions', label: 'Instructions', value: v('injectionInstructions'), hint: instructionsHint, error: errors.injectionInstructions, rows: 4 })}
  </fieldset>
  <fieldset><legend>Limits</legend>
    ${field({ name: 'maxTotalInteractions', label: 'Conversations in total', value: v('maxTotalInteractions'), hint: 'Empty for unlimited.', error: errors.maxTotalInteractions, attrs: html` inputmode="numeric"` })}
    ${field({ name: 'maxInteractionsPerWindow', label: 'Conversations per window', value: v('maxInteractionsPerWindow'), error: errors.maxInteractionsPerWindow, attrs: html` inputmode="numeric"` })}
    ${field({ name: 'windowSeconds', label: 'Window length (seconds)', value: v('windowSeconds'), hint: 'Set both or neither.', error: errors.windowSeconds, attrs: html` inputmode="numeric"` })}
    ${textarea({ name: 'disabledMessage', label: 'Message when disabled or used up', value: v('disabledMessage'), error: errors.disabledMessage, rows: 2 })}
    ${textarea({ name: 'cooldownMessage', label: 'Message when the window is full', value: v('cooldownMessage'), error: errors.cooldownMessage, rows: 2 })}
  </fieldset>`;
}

// PATCH keeps no template: the stored text is what the form shows, and only a change to it is
// substituted again (docs/api.md), so a new label alone leaves the old name in the instructions.
const EDIT_INSTRUCTIONS_HINT =
  'Shown as stored, placeholders already filled in. Placeholders such as {name} in instructions you change are filled in when you save; changing the label alone does not update the instructions.';

/** Recipients: list with search and filter, create, CSV import, edit, disable, delete, prompt and link preview. */
export function registerRecipientRoutes(r: Router, deps: DashboardDeps): void {
  const d = deps.domain;
  const rx = deps.recipients;

  const load = async (ctx: Context) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const campaign = await getCampaign(d, pc.project.id, ctx.params.cid);
    return { pc, campaign, path: campaignPath(pc.project.id, campaign.id) };
  };

  const loadRecipient = async (ctx: Context) => {
    const base = await load(ctx);
    const recipient = await rx.get(base.pc.project.id, ctx.params.rid, ctx.state.requestId);
    if (recipient.campaignId !== base.campaign.id) {
      throw new AppError('not_found', 'Recipient not found in this campaign.', {
        details: { recipientId: ctx.params.rid },
      });
    }
    return { ...base, recipient };
  };

  const crumbs = (pc: ProjectPage, c: CampaignView, path: string, last: string, lastHref?: string) =>
    breadcrumbs([
      ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
      [c.name, path],
      ['Recipients', lastHref ? `${path}/recipients` : null],
      ...(lastHref !== undefined ? ([[last, null]] as Array<[string, string | null]>) : []),
    ]);

  r.get('/p/:pid/campaigns/:cid/recipients', async (ctx) => {
    const { pc, campaign: c, path } = await load(ctx);
    const q = String(ctx.query.q ?? '').trim();
    const activeParam = String(ctx.query.active ?? '');
    const active = activeParam === 'true' ? true : activeParam === 'false' ? false : undefined;
    const pageNo = Math.max(0, Number.parseInt(String(ctx.query.page ?? '0'), 10) || 0);
    const page = await rx.list(
      pc.project.id,
      c.id,
      {
        limit: PAGE,
        offset: pageNo * PAGE,
        active,
        search: q || undefined,
        countMatches: active !== undefined,
      },
      ctx.state.requestId,
    );
    const rows: RecipientView[] = page.recipients;
    const filtered = q !== '' || active !== undefined;
    const total = filtered ? (page.matched ?? 0) : page.total;
    const tz = pc.operator?.timeZone ?? 'UTC';
    const editable = isEditable(c.state);
    const pages = Math.ceil(total / PAGE);
    const pageHref = (p: number) => `${path}/recipients${pageQuery({ q, active: activeParam }, p)}`;
    const done = ctx.query.done === 'deleted' ? notice('ok', 'Recipient deleted.') : html``;
    sendPage(
      ctx,
      layout(
        pc,
        `Recipients of ${c.name}`,
        html`${crumbs(pc, c, path, '')}
${done}
<h1>Recipients of “${c.name}”</h1>
<p>${stateBadge(c)} ${total} ${filtered ? 'matching ' : ''}${total === 1 ? 'recipient' : 'recipients'}${c.recipientCap !== null ? ` (cap ${c.recipientCap})` : ''}.</p>
${editableNote(c)}
${editable ? html`<div class="actions"><a class="button" href="${path}/recipients/new">New recipient</a><a class="button secondary" href="${path}/recipients/import">Import a CSV file</a></div>` : ''}
<form method="get" action="${path}/recipients" class="filters" role="search">
  <div class="field"><label for="f-q">Search label or external id</label><input id="f-q" name="q" type="search" value="${q}"></div>
  ${select({
    name: 'active',
    label: 'Show',
    options: [
      ['', 'All recipients'],
      ['true', 'Active only'],
      ['false', 'Disabled only'],
    ],
    value: activeParam,
  })}
  <div class="actions"><button type="submit" class="secondary">Apply</button></div>
</form>
${
  rows.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table><caption class="visually-hidden">Recipients</caption>
<thead><tr><th scope="col">Recipient</th><th scope="col">External id</th><th scope="col">Status</th><th scope="col" class="num">Conversations</th><th scope="col">Last conversation</th></tr></thead>
<tbody>${rows.map(
        (
          x,
        ) => html`<tr><td><a href="${path}/recipients/${x.id}">${x.label ?? x.externalId ?? x.id}</a></td><td>${x.externalId ?? '—'}</td>
<td>${recipientBadge(x)}</td>
<td class="num">${x.interactionCount}${x.maxTotalInteractions !== null ? ` / ${x.maxTotalInteractions}` : ''}</td>
<td>${x.lastInteractionAt ? formatInstant(x.lastInteractionAt, tz) : 'never'}</td></tr>`,
      )}</tbody></table></div>`
    : pageNo > 0 && total > 0
      ? // An address past the last page (an old link, a list that shrank): not "no recipients".
        html`<p>This page is past the end of the list: there ${total === 1 ? 'is' : 'are'} ${total} ${filtered ? 'matching ' : ''}${total === 1 ? 'recipient' : 'recipients'}, on ${pages} ${pages === 1 ? 'page' : 'pages'}. <a href="${pageHref(pages - 1)}">Go to the last page</a>.</p>`
      : html`<p>No recipients${q || activeParam ? ' match' : ' yet'}.</p>`
}
${pager(pageHref, pageNo, pages)}`,
      ),
    );
  });

  // ---- create one -------------------------------------------------------------------------
  const itemFromForm = (form: Form, errors: FieldErrors): Record<string, unknown> => {
    const item: Record<string, unknown> = {};
    for (const k of ['externalId', 'label', 'injectionInstructions', 'disabledMessage', 'cooldownMessage']) {
      const v = form.get(k).trim();
      if (v) item[k] = v;
    }
    item.injectionMode = form.get('injectionMode') === 'replace' ? 'replace' : 'append';
    item.isActive = form.get('isActive') === 'on';
    for (const k of ['maxTotalInteractions', 'maxInteractionsPerWindow', 'windowSeconds']) {
      const v = form.get(k).trim();
      if (!v) continue;
      const error = limitError(k, v);
      if (error) errors[k] = error;
      else item[k] = Number(v);
    }
    const metadata: Record<string, string> = {};
    for (const line of form.get('metadata').split(/\r?\n/)) {
      if (!line.trim()) continue;
      const i = line.indexOf('=');
      if (i <= 0) {
        errors.metadata = 'Write one key=value pair per line.';
        break;
      }
      metadata[line.slice(0, i).trim()] = line.slice(i + 1).trim();
    }
    if (Object.keys(metadata).length) item.metadata = metadata;
    return item;
  };

  const newPage = async (ctx: Context, form?: Form, errors: FieldErrors = {}, general?: string) => {
    const { pc, campaign: c, path } = await load(ctx);
    const v = (k: string) => form?.get(k) ?? '';
    sendPage(
      ctx,
      layout(
        pc,
        'New recipient',
        html`${crumbs(pc, c, path, 'New recipient', '')}
<h1>New recipient</h1>
${editableNote(c)}
${general ? notice('error', general) : ''}
${withErrorSummary(
  errors,
  html`<form method="post" action="${path}/recipients" novalidate>
  ${csrfField(pc)}
  ${field({ name: 'externalId', label: 'External id', value: v('externalId'), hint: 'Your own identifier, e.g. an e-mail address. Unique in the campaign.', error: errors.externalId, attrs: html` maxlength="191"` })}
  ${field({ name: 'label', label: 'Label', value: v('label'), hint: 'Display name.', error: errors.label, attrs: html` maxlength="191"` })}
  ${textarea({ name: 'metadata', label: 'Metadata', value: v('metadata'), hint: 'One key=value per line; set at creation only.', error: errors.metadata, rows: 3 })}
  <div class="check"><input type="checkbox" id="f-isActive" name="isActive"${!form || form.get('isActive') === 'on' ? html` checked` : ''}><label for="f-isActive">Active</label></div>
  ${settingsFields(v, errors, 'Placeholders such as {name}, {email} or {meta.key} are filled in now.')}
  <div class="actions"><button type="submit">Create recipient</button><a class="button secondary" href="${path}/recipients">Cancel</a></div>
</form>`,
)}`,
      ),
      Object.keys(errors).length || general ? 400 : 200,
    );
  };

  r.get('/p/:pid/campaigns/:cid/recipients/new', (ctx) => newPage(ctx));
  r.post('/p/:pid/campaigns/:cid/recipients', async (ctx) => {
    const { pc, campaign: c, path } = await load(ctx);
    const form = formOf(ctx);
    const errors: FieldErrors = {};
    const item = itemFromForm(form, errors);
    // The form's own refusals first, and with them whatever the API's schema finds in the rest.
    if (Object.keys(errors).length) {
      return newPage(ctx, form, { ...schemaFieldErrors('create-item', item, CREATE_FIELDS), ...errors });
    }
    try {
      const result = await rx.create(pc.project.id, c.id, [item], ctx.state.requestId);
      const first = result.results[0] as CreateResult;
      if (first.status === 'created') {
        ctx.status = 303;
        return ctx.redirect(`${path}/recipients/${first.id}?done=created`);
      }
      if (first.status === 'duplicate') {
        return newPage(ctx, form, {
          externalId: 'A recipient with this external id already exists in the campaign.',
        });
      }
      return newPage(
        ctx,
        form,
        recipientFieldErrors({ message: first.error, details: first.details }, CREATE_FIELDS),
      );
    } catch (err) {
      const cap = capRefusalInWords(err);
      if (cap) return newPage(ctx, form, {}, cap);
      if (err instanceof AppError && (err.code === 'conflict' || err.code === 'invalid_request')) {
        return newPage(ctx, form, {}, `${err.message} ${err.hint}`);
      }
      throw err;
    }
  });

  // ---- CSV import -------------------------------------------------------------------------
  r.get('/p/:pid/campaigns/:cid/recipients/import', async (ctx) => {
    const { pc, campaign: c, path } = await load(ctx);
    sendPage(
      ctx,
      layout(
        pc,
        'Import recipients',
        html`${crumbs(pc, c, path, 'Import', '')}
<h1>Import recipients from a CSV file</h1>
${editableNote(c)}
<p>The file is read in your browser. Map its columns, then the rows are sent in batches of ${LIMITS.itemsPerCreate}. Rows whose external id already exists are reported as duplicates, so running an import again is safe.</p>
<p id="importer-noscript" class="notice warn">The import needs JavaScript. You can create recipients one by one instead.</p>
<section id="importer" hidden data-endpoint="${path}/recipients/import.json" data-csrf="${pc.csrfToken ?? ''}" aria-labelledby="import-title">
  <h2 id="import-title" class="visually-hidden">Import</h2>
  <div class="field"><label for="csv-file">CSV file</label><p class="hint" id="csv-hint">First row: column names. Comma or semicolon separated, UTF-8.</p>
  <input id="csv-file" type="file" accept=".csv,text/csv" aria-describedby="csv-hint"></div>
  <fieldset id="mapping" hidden></fieldset>
  <div class="actions"><button type="button" id="import-start" disabled>Import rows</button></div>
  <label for="import-progress" class="visually-hidden">Import progress</label>
  <progress id="import-progress" hidden value="0" max="1"></progress>
  <p id="import-status" role="status" aria-live="polite"></p>
  <p id="import-summary" aria-live="polite"></p>
  <div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table id="import-report" hidden><caption>Per-row report</caption>
  <thead><tr><th scope="col">Line</th><th scope="col">External id</th><th scope="col">Result</th><th scope="col">Detail</th></tr></thead><tbody></tbody></table></div>
  <p><a href="${path}/recipients">Back to the recipients</a></p>
</section>`,
      ),
    );
  });

  r.post('/p/:pid/campaigns/:cid/recipients/import.json', async (ctx) => {
    const { pc, campaign: c } = await load(ctx);
    const body = (await readJsonBody(ctx)) as { items?: unknown } | undefined;
    const items = body?.items;
    if (!Array.isArray(items) || items.length < 1 || items.length > LIMITS.itemsPerCreate) {
      throw new AppError(
        'invalid_request',
        `Send {"items": [...]} with 1 to ${LIMITS.itemsPerCreate} items.`,
        {
          details: {
            problems: [
              { pointer: '/items', rule: 'size', message: `must hold 1 to ${LIMITS.itemsPerCreate} items` },
            ],
          },
        },
      );
    }
    const result = await rx.create(pc.project.id, c.id, items, ctx.state.requestId);
    ctx.status = result.created > 0 ? 201 : 422;
    ctx.body = {
      created: result.created,
      failed: result.failed,
      total: result.total,
      results: (result.results as CreateResult[]).map((x) => ({
        status: x.status,
        index: x.index,
        externalId: x.externalId ?? null,
        id: x.id ?? null,
        error: x.status === 'error' ? problemsInWords({ message: x.error, details: x.details }) : null,
      })),
    };
  });

  // ---- one recipient ----------------------------------------------------------------------
  const DONE: Record<string, string> = {
    created: 'Recipient created. Share its link once the campaign is launched.',
    disabled: 'Recipient disabled: the link shows its disabled message.',
    enabled: 'Recipient enabled.',
    saved: 'Changes saved. The link is unchanged.',
    unchanged: 'Nothing to save: no field was changed.',
  };

  r.get('/p/:pid/campaigns/:cid/recipients/:rid', async (ctx) => {
    const { pc, campaign: c, path, recipient: x } = await loadRecipient(ctx);
    const tz = pc.operator?.timeZone ?? 'UTC';
    const rpath = `${path}/recipients/${x.id}`;
    const done = DONE[String(ctx.query.done ?? '')];
    const meta = Object.entries(x.metadata ?? {});
    const limit = (v: number | null) => (v === null ? 'unlimited' : String(v));
    sendPage(
      ctx,
      layout(
        pc,
        x.label ?? x.externalId ?? x.id,
        html`${crumbs(pc, c, path, x.label ?? x.externalId ?? x.id, '')}
${done ? notice('ok', done) : ''}
<h1>${x.label ?? x.externalId ?? x.id}</h1>
<p>${recipientBadge(x)} in ${stateBadge(c)} campaign “${c.name}”</p>
${editableNote(c)}
<h2>Link</h2>
<div class="secret"><output id="recipient-link">${x.link}</output><button type="button" data-copy="recipient-link" hidden>Copy link</button></div>
<p id="recipient-link-copied" role="status" class="meta"></p>
<div class="actions">
  <a class="button secondary" href="${x.link}" target="_blank" rel="noopener">Open the link page<span class="visually-hidden"> (new tab)</span></a>
  <a class="button secondary" href="${rpath}/prompt">Preview the system prompt</a>
</div>
<p class="meta">Opening the link page costs nothing. A message sent there starts a conversation, which counts against this link's limits and the campaign's budget like the customer's own.</p>
<dl class="facts">
  <dt>External id</dt><dd>${x.externalId ?? '—'}</dd>
  <dt>Conversations</dt><dd>${x.interactionCount} (total limit ${limit(x.maxTotalInteractions)})</dd>
  <dt>Window limit</dt><dd>${x.maxInteractionsPerWindow === null ? 'none' : `${x.maxInteractionsPerWindow} per ${x.windowSeconds} s`}</dd>
  <dt>Last conversation</dt><dd>${x.lastInteractionAt ? formatInstant(x.lastInteractionAt, tz) : 'never'}</dd>
  <dt>Instructions</dt><dd>${x.injectionMode ?? 'append'}: ${x.injectionInstructions ?? '—'}</dd>
  <dt>Disabled message</dt><dd>${x.disabledMessage ?? 'default'}</dd>
  <dt>Cooldown message</dt><dd>${x.cooldownMessage ?? 'default'}</dd>
  <dt>Metadata</dt><dd>${meta.length ? html`<ul>${meta.map(([k, v]) => html`<li><code>${k}</code>: ${v}</li>`)}</ul>` : '—'}</dd>
  <dt>Created</dt><dd>${formatInstant(x.createdAt, tz)}</dd>
  <dt>Id</dt><dd><code>${x.id}</code></dd>
</dl>
${recipientActions(pc, c, x, rpath)}`,
      ),
    );
  });

  const setActive = (isActive: boolean) => async (ctx: Context) => {
    const { pc, path, recipient } = await loadRecipient(ctx);
    await rx.update(pc.project.id, recipient.id, { isActive }, ctx.state.requestId);
    ctx.status = 303;
    ctx.redirect(`${path}/recipients/${recipient.id}?done=${isActive ? 'enabled' : 'disabled'}`);
  };
  r.post('/p/:pid/campaigns/:cid/recipients/:rid/disable', setActive(false));
  r.post('/p/:pid/campaigns/:cid/recipients/:rid/enable', setActive(true));
  r.post('/p/:pid/campaigns/:cid/recipients/:rid/delete', async (ctx) => {
    const { pc, path, recipient } = await loadRecipient(ctx);
    await rx.remove(pc.project.id, recipient.id, ctx.state.requestId);
    ctx.status = 303;
    ctx.redirect(`${path}/recipients?done=deleted`);
  });

  // ---- edit -------------------------------------------------------------------------------
  type LoadedRecipient = Awaited<ReturnType<typeof loadRecipient>>;
  const editPage = (
    ctx: Context,
    { pc, campaign: c, path, recipient: x }: LoadedRecipient,
    values: RecipientFormValues,
    shown: RecipientFormValues,
    errors: FieldErrors = {},
  ) => {
    const rpath = `${path}/recipients/${x.id}`;
    const name = x.label ?? x.externalId ?? x.id;
    const v = (k: string) => values[k as keyof RecipientFormValues] ?? '';
    sendPage(
      ctx,
      layout(
        pc,
        `Edit ${name}`,
        html`${breadcrumbs([
          ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
          [c.name, path],
          ['Recipients', `${path}/recipients`],
          [name, rpath],
          ['Edit', null],
        ])}
<h1>Edit ${name}</h1>
<p>The link stays the same. The external id${x.externalId ? html` (<code>${x.externalId}</code>)` : ''} and metadata are set at creation and cannot be changed; to close the link, disable the recipient on its page.</p>
${withErrorSummary(
  errors,
  html`<form method="post" action="${rpath}/edit" novalidate>
  ${csrfField(pc)}
  ${EDIT_FIELDS.map((k) => html`<input type="hidden" name="${SHOWN_PREFIX}${k}" value="${shown[k]}">`)}
  ${field({ name: 'label', label: 'Label', value: v('label'), hint: 'Display name. Empty to clear it.', error: errors.label, attrs: html` maxlength="191"` })}
  ${settingsFields(v, errors, EDIT_INSTRUCTIONS_HINT)}
  <div class="actions"><button type="submit">Save changes</button><a class="button secondary" href="${rpath}">Cancel</a></div>
</form>`,
)}`,
      ),
      Object.keys(errors).length ? 400 : 200,
    );
  };

  // Refused before the form is shown or read: the same rule the service would apply to the PATCH.
  const loadEditable = async (ctx: Context) => {
    const loaded = await loadRecipient(ctx);
    if (!isEditable(loaded.campaign.state))
      throw recipientsNotEditable(loaded.campaign.id, loaded.campaign.state);
    return loaded;
  };

  r.get('/p/:pid/campaigns/:cid/recipients/:rid/edit', async (ctx) => {
    const loaded = await loadEditable(ctx);
    const shown = formValuesOf(loaded.recipient);
    editPage(ctx, loaded, shown, shown);
  });
  r.post('/p/:pid/campaigns/:cid/recipients/:rid/edit', async (ctx) => {
    const loaded = await loadEditable(ctx);
    const { pc, path, recipient: x } = loaded;
    const form = formOf(ctx);
    const values = formValuesFrom(form);
    const shown = shownValuesFrom(form, x);
    const { patch, errors } = recipientPatch(values, shown);
    if (Object.keys(errors).length) {
      const rest = schemaFieldErrors('patch', patch, EDIT_FIELDS);
      return editPage(ctx, loaded, values, shown, { ...rest, ...errors });
    }
    const changed = Object.keys(patch).length > 0;
    if (changed) {
      try {
        await rx.update(pc.project.id, x.id, patch, ctx.state.requestId);
      } catch (err) {
        return editPage(ctx, loaded, values, shown, patchFieldErrors(err));
      }
    }
    ctx.status = 303;
    ctx.redirect(`${path}/recipients/${x.id}?done=${changed ? 'saved' : 'unchanged'}`);
  });

  r.get('/p/:pid/campaigns/:cid/recipients/:rid/prompt', async (ctx) => {
    const { pc, campaign: c, path, recipient: x } = await loadRecipient(ctx);
    const device = await getDevice(d, pc.project.id, c.deviceId);
    const sample = String(ctx.query.sample ?? '').slice(0, 2000);
    const { systemPrompt: prompt, knowledge } = promptFor(device, x, sample, d.knowledgeEntries);
    const rpath = `${path}/recipients/${x.id}`;
    const preview: SafeHtml = html`<pre class="prompt" id="system-prompt" tabindex="0" aria-label="System prompt">${prompt}</pre>`;
    sendPage(
      ctx,
      layout(
        pc,
        'System prompt preview',
        html`${breadcrumbs([
          ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
          [c.name, path],
          ['Recipients', `${path}/recipients`],
          [x.label ?? x.externalId ?? x.id, rpath],
          ['System prompt', null],
        ])}
<h1>System prompt of ${x.label ?? x.externalId ?? x.id}</h1>
<p>This is the exact system prompt a conversation on this link starts with: the device “${device.name}” persona, the safety rules, the knowledge retrieved for the conversation, then the instructions (${x.injectionMode ?? 'append'} mode).</p>
<form method="get" action="${rpath}/prompt" class="filters">
  <div class="field"><label for="f-sample">Sample customer message</label><p class="hint" id="f-sample-hint">Knowledge entries are chosen by what the customer writes; without a message the first ${knowledge.length} are used.</p><input id="f-sample" name="sample" value="${sample}" aria-describedby="f-sample-hint"></div>
  <div class="actions"><button type="submit" class="secondary">Recompute</button></div>
</form>
${preview}
<p><button type="button" data-copy="system-prompt" hidden>Copy prompt</button> <span id="system-prompt-copied" role="status" class="meta"></span></p>`,
      ),
    );
  });
}
