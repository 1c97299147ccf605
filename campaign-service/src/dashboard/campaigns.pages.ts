import type Router from '@koa/router';
import { CAMPAIGN_STATES, type CampaignState, isEditable, type RecipientJson } from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import {
  addTopOff,
  type CampaignView,
  type CreateCampaignInput,
  createCampaign,
  deleteCampaign,
  getCampaign,
  haltCampaign,
  launchCampaign,
  listCampaigns,
  type UpdateCampaignInput,
  updateCampaign,
} from '../campaigns/campaigns.service';
import { type Device, listDevices } from '../devices/devices.service';
import { compileAdminSchemas } from '../http/admin.schemas';
import { invalid } from '../problems';
import { actingAs, type DashboardDeps, formOf, projectContext, sendPage } from './context';
import { actOnce, onceField, RESENT } from './form-once';
import { type FieldErrors, type Form, formatMoney, intField, moneyField, moneyInput } from './forms';
import { html, type SafeHtml } from './html';
import {
  breadcrumbs,
  confirmOrBack,
  csrfField,
  errorSummary,
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
  withErrorSummary,
} from './layout';
import { baseFields, baseFrom, compareWithBase, fingerprints, quoted } from './stale-edits';
import { formatDuration, formatInstant, instantToLocal, isTimeZone, localToInstant, timeZones } from './time';
import { barChart, conversationsOverTime } from './usage-chart';

/** Share of the included conversations under which the budget counts as low. */
export const LOW_BUDGET_SHARE = 0.1;

type ProjectPage = PageContext & { project: NonNullable<PageContext['project']> };

const campaignPath = (pid: string, cid: string) => `${projectPath(pid)}/campaigns/${encodeURIComponent(cid)}`;

/** The instant a campaign ends or ended: the earlier of its end date and a halt. */
function effectiveEnd(c: CampaignView): string {
  return c.haltedAt && c.haltedAt < c.endDate ? c.haltedAt : c.endDate;
}

/** Server-rendered timing text, kept live by the page script with the state badge before it. */
export function timingText(c: CampaignView): SafeHtml {
  const t = c.timing;
  const text =
    t.startsInSeconds !== null
      ? `Starts in ${formatDuration(t.startsInSeconds)}`
      : t.runningForSeconds !== null
        ? `Running for ${formatDuration(t.runningForSeconds)}`
        : t.endedAgoSeconds !== null
          ? `Ended ${formatDuration(t.endedAgoSeconds)} ago`
          : 'Not launched';
  // data-state: the phase the page was rendered in, whose actions it offers.
  return html`<span data-timing data-state="${c.state}" data-launched="${c.launchedAt ?? ''}" data-start="${c.startDate}" data-end="${effectiveEnd(c)}">${text}</span>`;
}

/** The budget line: used of included, or unlimited. */
export function allowanceText(c: CampaignView): string {
  const a = c.allowance;
  if (c.budgetMode === 'fixed') return `${a.used} conversations (fixed price, uncapped)`;
  if (a.included === null) return `${a.used} conversations (no top-off yet: unlimited)`;
  return `${a.used} of ${a.included} conversations used, ${a.remaining} left`;
}

/** A warning when a capped budget is low or used up, while a top-off can still keep links working. */
export function budgetWarning(c: CampaignView): SafeHtml {
  // A completed campaign's links stay closed whatever its budget: asking for a top-off would
  // contradict topOffNote and push the operator to pay for nothing.
  if (c.state === 'completed') return html``;
  const a = c.allowance;
  if (c.budgetMode !== 'metered' || a.included === null || a.remaining === null) return html``;
  if (a.exhausted) {
    return notice('error', 'The budget is used up: new conversations are refused until you add a top-off.');
  }
  if (a.remaining <= Math.max(1, Math.ceil(a.included * LOW_BUDGET_SHARE))) {
    return notice(
      'warn',
      `Low budget: only ${a.remaining} conversations left. Add a top-off to keep links working.`,
    );
  }
  return html``;
}

/**
 * What a top-off's own price does, as `addTopOff` does it: the top-off's conversations are billed at
 * it, and the campaign's price is not changed (later top-offs, and conversations past the last
 * top-off, take the campaign's price).
 */
export function topOffPriceHint(inForce: number | null): string {
  const campaign =
    inForce === null
      ? 'The campaign has no price (it bills nothing)'
      : `The campaign's price is ${formatMoney(inForce)}`;
  return `${campaign}. A different price here applies to this top-off's conversations only: the campaign's price stays as it is, and later top-offs take it unless given their own. Left as shown, or empty, this top-off takes the campaign's price. For example 0.25.`;
}

/** What a top-off cannot do once the campaign is over; the rules allow one, so say it plainly. */
export function topOffNote(c: CampaignView): SafeHtml {
  if (c.state !== 'completed') return html``;
  const why = c.haltedAt ? 'This campaign was halted' : 'This campaign has ended';
  return notice(
    'warn',
    `${why}: its links stay closed, so a top-off only raises the allowance. It does not reopen the campaign.`,
  );
}

/**
 * A start in the past is allowed (only a past end stops a launch), but it changes what a launch
 * does; the draft's page says so, right after it is created with such a date.
 */
export function pastStartNote(c: CampaignView, now: Date): SafeHtml {
  if (c.state !== 'draft' || Date.parse(c.startDate) > now.getTime()) return html``;
  if (Date.parse(c.endDate) <= now.getTime()) {
    return notice(
      'warn',
      'The end date has passed: this campaign cannot be launched. Edit its schedule to launch it.',
    );
  }
  return notice(
    'warn',
    'The start date has passed: launching makes the campaign active at once, and its links open to customers immediately.',
  );
}

interface CampaignFormValues {
  name: string;
  deviceId: string;
  start: string;
  end: string;
  timeZone: string;
  budgetMode: string;
  price: string;
  fixedPrice: string;
  recipientCap: string;
  /**
   * The edit form's stored schedule and how it showed it (hidden fields): a time left as shown
   * keeps its stored instant, since the form shows minutes in one zone, which cannot tell the
   * seconds nor which of a repeated hour's times (clocks going back) it stands for.
   */
  kept?: { start: string; end: string; shownStart: string; shownEnd: string; shownTimeZone: string };
  /** The edit form's fingerprints of what it showed, by facet (see stale-edits.ts). */
  base?: Record<string, string>;
  /** The facets an edit changed from what its form showed (set on save). */
  changed?: string[];
}

/** What the edit form saves together: a facet changed elsewhere and here too is not saved over. */
type CampaignFacet = 'name' | 'deviceId' | 'schedule' | 'budget' | 'recipientCap';

type CampaignFields = Pick<
  CreateCampaignInput,
  | 'name'
  | 'deviceId'
  | 'startDate'
  | 'endDate'
  | 'budgetMode'
  | 'pricePerConversation'
  | 'fixedPrice'
  | 'recipientCap'
>;

/**
 * A campaign's (or the form's) values by facet. The budget's mode and prices go together, as do
 * the schedule's two times: a price saved onto a mode changed elsewhere would make no sense.
 */
function campaignFacets(x: CampaignFields): Record<CampaignFacet, unknown> {
  return {
    name: x.name.trim(),
    deviceId: x.deviceId,
    schedule: [x.startDate, x.endDate],
    budget: [
      x.budgetMode,
      x.budgetMode === 'metered' ? (x.pricePerConversation ?? null) : null,
      x.budgetMode === 'fixed' ? (x.fixedPrice ?? null) : null,
    ],
    recipientCap: x.recipientCap ?? null,
  };
}

/** The campaign fields of each facet, the form's controls of each, and the field its refusal goes under. */
const FACETS: Record<
  CampaignFacet,
  { fields: (keyof CampaignFields)[]; controls: (keyof CampaignFormValues)[]; under: string }
> = {
  name: { fields: ['name'], controls: ['name'], under: 'name' },
  deviceId: { fields: ['deviceId'], controls: ['deviceId'], under: 'deviceId' },
  schedule: { fields: ['startDate', 'endDate'], controls: ['start', 'end', 'timeZone'], under: 'start' },
  budget: {
    fields: ['budgetMode', 'pricePerConversation', 'fixedPrice'],
    controls: ['budgetMode', 'price', 'fixedPrice'],
    under: 'budgetMode',
  },
  recipientCap: { fields: ['recipientCap'], controls: ['recipientCap'], under: 'recipientCap' },
};

/** What a campaign holds now in one facet, in words. */
function holdsNow(f: CampaignFacet, c: CampaignView, devices: Device[], tz: string): string {
  switch (f) {
    case 'name':
      return `the name is now ${quoted(c.name)}`;
    case 'deviceId':
      return `the device is now ${quoted(devices.find((x) => x.id === c.deviceId)?.name ?? c.deviceId)}`;
    case 'schedule':
      return `it now runs from ${formatInstant(c.startDate, tz)} to ${formatInstant(c.endDate, tz)}`;
    case 'budget':
      return c.budgetMode === 'fixed'
        ? `the budget is now a fixed price of ${formatMoney(c.fixedPrice)}`
        : `the budget is now metered, ${c.pricePerConversation === null ? 'with no price' : `at ${formatMoney(c.pricePerConversation)} per conversation`}`;
    case 'recipientCap':
      return `the recipient cap is now ${c.recipientCap === null ? 'none' : c.recipientCap}`;
  }
}

function valuesFrom(c: CampaignView, tz: string): CampaignFormValues {
  const start = instantToLocal(c.startDate, tz);
  const end = instantToLocal(c.endDate, tz);
  return {
    name: c.name,
    deviceId: c.deviceId,
    start,
    end,
    kept: { start: c.startDate, end: c.endDate, shownStart: start, shownEnd: end, shownTimeZone: tz },
    timeZone: tz,
    budgetMode: c.budgetMode,
    price: moneyInput(c.pricePerConversation),
    fixedPrice: moneyInput(c.fixedPrice),
    recipientCap: c.recipientCap === null ? '' : String(c.recipientCap),
    base: fingerprints(campaignFacets(c)),
  };
}

/** The instant a default time stands for, for the script that moves it to the browser's zone. */
function instantOf(local: string, timeZone: string): SafeHtml {
  const at = localToInstant(local, timeZone);
  return at ? html` data-instant="${at.toISOString()}"` : html``;
}

function campaignForm(
  pc: ProjectPage,
  action: string,
  devices: Device[],
  v: CampaignFormValues,
  errors: FieldErrors,
  autoTz: boolean,
  submit: string,
): SafeHtml {
  return withErrorSummary(
    errors,
    html`<form method="post" action="${action}" novalidate>
  ${csrfField(pc)}
  ${v.base ? baseFields(v.base) : ''}
  ${v.kept ? KEPT_FIELDS.map(([name, key]) => html`<input type="hidden" name="${name}" value="${v.kept?.[key] ?? ''}">`) : ''}
  ${field({ name: 'name', label: 'Name', value: v.name, required: true, error: errors.name, attrs: html` maxlength="200"` })}
  ${
    devices.length === 0
      ? notice(
          'warn',
          html`This project has no device yet. <a href="${projectPath(pc.project.id)}/devices/new">Create a device</a> first.`,
        )
      : select({
          name: 'deviceId',
          label: 'Device (channel)',
          options: devices.map((d) => [d.id, `${d.name}${d.isActive ? '' : ' (inactive)'}`]),
          value: v.deviceId,
          error: errors.deviceId,
        })
  }
  <fieldset><legend>Schedule</legend>
    ${field({ name: 'start', label: 'Starts', type: 'datetime-local', value: v.start, required: true, error: errors.start, attrs: autoTz ? instantOf(v.start, v.timeZone) : undefined })}
    ${field({ name: 'end', label: 'Ends', type: 'datetime-local', value: v.end, required: true, error: errors.end, attrs: autoTz ? instantOf(v.end, v.timeZone) : undefined })}
    ${select({
      name: 'timeZone',
      label: 'Time zone of these times',
      options: timeZones().map((z) => [z, z]),
      value: v.timeZone,
      hint: 'Stored as UTC instants: the campaign changes state at the same moment everywhere.',
      error: errors.timeZone,
      attrs: autoTz ? html` data-tz-auto="1"` : undefined,
    })}
  </fieldset>
  <fieldset><legend>Budget</legend>
    <div class="check"><input type="radio" id="mode-metered" name="budgetMode" value="metered"${v.budgetMode !== 'fixed' ? html` checked` : ''}><label for="mode-metered">Metered: pay per conversation, budget extended by top-offs</label></div>
    <div class="check"><input type="radio" id="mode-fixed" name="budgetMode" value="fixed"${v.budgetMode === 'fixed' ? html` checked` : ''}><label for="mode-fixed">Fixed price: a flat total billed in the month of launch, uncapped</label></div>
    ${errors.budgetMode ? html`<p class="error">${errors.budgetMode}</p>` : ''}
    ${field({ name: 'price', label: 'Price per conversation (metered)', value: v.price, hint: 'For example 0.25. Leave empty to bill nothing.', error: errors.price, attrs: html` inputmode="decimal"` })}
    ${field({ name: 'fixedPrice', label: 'Fixed price (fixed campaigns)', value: v.fixedPrice, hint: 'The flat total, for example 1500.', error: errors.fixedPrice, attrs: html` inputmode="decimal"` })}
  </fieldset>
  ${field({ name: 'recipientCap', label: 'Recipient cap', value: v.recipientCap, hint: 'Most links the campaign may hold at once. Leave empty for no cap.', error: errors.recipientCap, attrs: html` inputmode="numeric"` })}
  <div class="actions"><button type="submit">${submit}</button><a class="button secondary" href="${projectPath(pc.project.id)}/campaigns">Cancel</a></div>
</form>`,
  );
}

// The hidden fields of `kept`, by name.
const KEPT_FIELDS = [
  ['kept.start', 'start'],
  ['kept.end', 'end'],
  ['shown.start', 'shownStart'],
  ['shown.end', 'shownEnd'],
  ['shown.timeZone', 'shownTimeZone'],
] as const;

/** The instant of a schedule time: the stored one while the field and zone are as shown, else the field read in the zone. */
function scheduleInstant(
  local: string,
  timeZone: string,
  kept: string | undefined,
  shown: string | undefined,
  shownTz: string | undefined,
): Date | null {
  if (kept !== undefined && local === shown && timeZone === shownTz && !Number.isNaN(Date.parse(kept)))
    return new Date(kept);
  return localToInstant(local, timeZone);
}

/** Reads the campaign form; errors are keyed by field name. */
function parseCampaignForm(form: Form): {
  values: CampaignFormValues;
  input?: CreateCampaignInput;
  errors: FieldErrors;
} {
  const values: CampaignFormValues = {
    name: form.get('name').trim(),
    deviceId: form.get('deviceId'),
    start: form.get('start'),
    end: form.get('end'),
    timeZone: form.get('timeZone') || 'UTC',
    budgetMode: form.get('budgetMode'),
    price: form.get('price'),
    fixedPrice: form.get('fixedPrice'),
    recipientCap: form.get('recipientCap'),
  };
  if (form.get('kept.start') && form.get('kept.end')) {
    values.kept = {
      start: form.get('kept.start'),
      end: form.get('kept.end'),
      shownStart: form.get('shown.start'),
      shownEnd: form.get('shown.end'),
      shownTimeZone: form.get('shown.timeZone'),
    };
  }
  const errors: FieldErrors = {};
  if (!values.name) errors.name = 'Enter a name.';
  if (!values.deviceId) errors.deviceId = 'Choose a device.';
  if (!isTimeZone(values.timeZone)) errors.timeZone = 'Choose a time zone from the list.';
  const { kept } = values;
  const start = scheduleInstant(
    values.start,
    values.timeZone,
    kept?.start,
    kept?.shownStart,
    kept?.shownTimeZone,
  );
  const end = scheduleInstant(values.end, values.timeZone, kept?.end, kept?.shownEnd, kept?.shownTimeZone);
  if (!start) errors.start = 'Enter the start date and time.';
  if (!end) errors.end = 'Enter the end date and time.';
  if (start && end && start >= end) errors.end = 'The end must be after the start.';
  if (values.budgetMode !== 'metered' && values.budgetMode !== 'fixed')
    errors.budgetMode = 'Choose a budget mode.';
  const price = moneyField(form, 'price', errors);
  const fixedPrice = moneyField(form, 'fixedPrice', errors);
  if (values.budgetMode === 'fixed' && fixedPrice === null && !errors.fixedPrice) {
    errors.fixedPrice = 'Enter the fixed price of a fixed campaign.';
  }
  const recipientCap = intField(form, 'recipientCap', errors, { optional: true, min: 1, max: 10_000_000 });
  if (Object.keys(errors).length > 0) return { values, errors };
  const mode = values.budgetMode as 'metered' | 'fixed';
  return {
    values,
    errors,
    input: {
      name: values.name,
      deviceId: values.deviceId,
      startDate: (start as Date).toISOString(),
      endDate: (end as Date).toISOString(),
      budgetMode: mode,
      // The other mode's price is dropped: a campaign carries only the price its mode uses.
      pricePerConversation: mode === 'metered' ? price : null,
      fixedPrice: mode === 'fixed' ? fixedPrice : null,
      recipientCap,
    },
  };
}

const POINTER_FIELDS: Record<string, string> = {
  '/name': 'name',
  '/deviceId': 'deviceId',
  '/startDate': 'start',
  '/endDate': 'end',
  '/budgetMode': 'budgetMode',
  '/pricePerConversation': 'price',
  '/fixedPrice': 'fixedPrice',
  '/recipientCap': 'recipientCap',
};

/** The campaign form's labels by pointer: a refusal names the field as the operator sees it. */
const POINTER_LABELS: Record<string, string> = {
  '/name': 'Name',
  '/deviceId': 'Device',
  '/startDate': 'Starts',
  '/endDate': 'Ends',
  '/budgetMode': 'Budget mode',
  '/pricePerConversation': 'Price per conversation',
  '/fixedPrice': 'Fixed price',
  '/recipientCap': 'Recipient cap',
};

/**
 * Turns a domain `invalid_request` into field errors; anything else is rethrown. `labels` names a
 * pointer's field in the operator's words (else the API's field name is used).
 */
export function fieldErrorsOf(
  err: unknown,
  map: Record<string, string>,
  labels: Record<string, string> = {},
): FieldErrors {
  if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
  const problems =
    (err.details as { problems?: { pointer: string; rule?: string; message: string }[] }).problems ?? [];
  const errors: FieldErrors = {};
  for (const p of problems) {
    const name = map[p.pointer] ?? map[p.pointer.split('/').slice(0, 2).join('/')] ?? '_';
    // A number-or-null rule fails in both branches, e.g. `maximum` and then `type` ("must be
    // null"): the field keeps the problem that names what is wrong with the value it was given.
    if (p.rule === 'type' && name in errors) continue;
    errors[name] = `${labels[p.pointer] ?? (p.pointer.slice(1) || 'This')} ${p.message}.`;
  }
  if (Object.keys(errors).length === 0) errors._ = err.message;
  return errors;
}

/** Campaign list, create, edit, launch, halt, delete, top-offs and the campaign page. */

/** Campaigns on one page of the dashboard's list. */
export const CAMPAIGN_PAGE = 24;

/**
 * The campaigns the list shows for a filter, newest first: those in `state` (any when undefined)
 * whose name holds `q`, whatever its case.
 */
export function matchingCampaigns<C extends { name: string; state: CampaignState }>(
  campaigns: readonly C[],
  { state, q }: { state?: CampaignState; q: string },
): C[] {
  const needle = q.toLocaleLowerCase();
  return [...campaigns]
    .reverse()
    .filter((c) => (state === undefined || c.state === state) && c.name.toLocaleLowerCase().includes(needle));
}

export function registerCampaignRoutes(r: Router, deps: DashboardDeps): void {
  const d = deps.domain;
  // The admin API's schemas: the dashboard accepts exactly what the API accepts.
  const check = compileAdminSchemas();
  const validate = (schema: 'create-campaign' | 'patch-campaign', input: UpdateCampaignInput) => {
    const problems = check(schema, JSON.parse(JSON.stringify(input)));
    if (problems.length) throw invalid(problems);
  };

  r.get('/p/:pid/campaigns', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const q = String(ctx.query.q ?? '').trim();
    const stateParam = String(ctx.query.state ?? '');
    const state = (CAMPAIGN_STATES as readonly string[]).includes(stateParam)
      ? (stateParam as CampaignState)
      : undefined;
    const pageNo = Math.max(0, Number.parseInt(String(ctx.query.page ?? '0'), 10) || 0);
    const all = await listCampaigns(d, pc.project.id);
    const matching = matchingCampaigns(all, { state, q });
    const campaigns = matching.slice(pageNo * CAMPAIGN_PAGE, (pageNo + 1) * CAMPAIGN_PAGE);
    const pages = Math.ceil(matching.length / CAMPAIGN_PAGE);
    const filtered = state !== undefined || q !== '';
    const devices = new Map((await listDevices(d, pc.project.id)).map((x) => [x.id, x.name]));
    const tz = pc.operator?.timeZone ?? 'UTC';
    const base = projectPath(pc.project.id);
    const pageHref = (p: number) => `${base}/campaigns${pageQuery({ q, state }, p)}`;
    sendPage(
      ctx,
      layout(
        pc,
        'Campaigns',
        html`${ctx.query.done === 'project-created' ? notice('ok', 'Project created. You are its operator; add colleagues on its Operators page.') : ''}
${ctx.query.done === 'project-created' && ctx.query[RESENT] === '1' ? notice('warn', 'That form had already been sent: the project was created once, not again.') : ''}
${ctx.query.done === 'campaign-deleted' ? notice('ok', 'Campaign deleted. Its recipients and their links go with it within seconds.') : ''}
<h1>Campaigns</h1>
<div class="actions"><a class="button" href="${base}/campaigns/new">New campaign</a></div>
${
  all.length > 0
    ? html`<form method="get" action="${base}/campaigns" class="filters" role="search">
  <div class="field"><label for="f-q">Search names</label><input id="f-q" name="q" type="search" value="${q}"></div>
  ${select({
    name: 'state',
    label: 'Show',
    options: [
      ['', 'All campaigns'],
      ['draft', 'Drafts'],
      ['upcoming', 'Upcoming'],
      ['active', 'Active'],
      ['completed', 'Completed or halted'],
    ],
    value: state ?? '',
  })}
  <div class="actions"><button type="submit" class="secondary">Apply</button></div>
</form>
<p>${matching.length} ${filtered ? 'matching ' : ''}${matching.length === 1 ? 'campaign' : 'campaigns'}, newest first.</p>`
    : ''
}
${
  campaigns.length === 0
    ? all.length === 0
      ? html`<p>No campaigns yet. Create a device first, then a campaign.</p>`
      : matching.length > 0
        ? // An address past the last page (an old link, a list that shrank): not "no campaigns".
          html`<p>This page is past the end of the list, which has ${pages} ${pages === 1 ? 'page' : 'pages'}. <a href="${pageHref(pages - 1)}">Go to the last page</a>.</p>`
        : html`<p>No campaigns match.</p>`
    : html`<ul class="cards">${campaigns.map(
        (c) => html`<li class="card">
  <h2><a href="${campaignPath(pc.project.id, c.id)}">${c.name}</a></h2>
  <p>${stateBadge(c)} ${timingText(c)}</p>
  <p class="meta">${formatInstant(c.startDate, tz)} → ${formatInstant(c.endDate, tz)}</p>
  <p class="meta">Device: ${devices.get(c.deviceId) ?? c.deviceId} · ${c.budgetMode} · ${allowanceText(c)}</p>
  ${budgetWarning(c)}
</li>`,
      )}</ul>`
}
${pager(pageHref, pageNo, pages)}`,
      ),
    );
  });

  const newPage = async (ctx: Context, v?: CampaignFormValues, errors: FieldErrors = {}) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const devices = await listDevices(d, pc.project.id);
    const tz = pc.operator?.timeZone ?? 'UTC';
    const now = d.clock();
    const values = v ?? {
      name: '',
      deviceId: devices[0]?.id ?? '',
      start: instantToLocal(new Date(Math.ceil(now.getTime() / 3600_000) * 3600_000 + 3600_000), tz),
      end: instantToLocal(new Date(Math.ceil(now.getTime() / 3600_000) * 3600_000 + 8 * 86400_000), tz),
      timeZone: tz,
      budgetMode: 'metered',
      price: '',
      fixedPrice: '',
      recipientCap: '',
    };
    sendPage(
      ctx,
      layout(
        pc,
        'New campaign',
        html`${breadcrumbs([
          ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
          ['New campaign', null],
        ])}
<h1>New campaign</h1>
<p>A new campaign is a draft: add recipients, then launch it.</p>
${campaignForm(pc, `${projectPath(pc.project.id)}/campaigns`, devices, values, errors, !v && !pc.operator?.timeZoneChosen, 'Create campaign')}`,
      ),
      Object.keys(errors).length ? 400 : 200,
    );
  };

  r.get('/p/:pid/campaigns/new', (ctx) => newPage(ctx));
  r.post('/p/:pid/campaigns', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const { values, input, errors } = parseCampaignForm(formOf(ctx));
    if (!input) return newPage(ctx, values, errors);
    try {
      validate('create-campaign', input);
      const c = await createCampaign(actingAs(d, pc), pc.project.id, input);
      ctx.status = 303;
      ctx.redirect(`${campaignPath(pc.project.id, c.id)}?done=created`);
    } catch (err) {
      return newPage(ctx, values, fieldErrorsOf(err, POINTER_FIELDS, POINTER_LABELS));
    }
  });

  const editPage = async (
    ctx: Context,
    v?: CampaignFormValues,
    errors: FieldErrors = {},
    general?: string,
    stale?: CampaignFacet[],
  ) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const c = await getCampaign(d, pc.project.id, ctx.params.cid);
    const devices = await listDevices(d, pc.project.id);
    const tz = pc.operator?.timeZone ?? 'UTC';
    const path = campaignPath(pc.project.id, c.id);
    const editable = isEditable(c.state);
    if (stale && v && editable) {
      // Changed elsewhere and here too: the form now starts from what the campaign holds, what the
      // operator changed kept as typed, and under each such field what it holds now. Saved again,
      // it saves those fields alone, over the other change, as the operator now knowingly asks.
      const current = valuesFrom(c, tz);
      for (const [f, { controls }] of Object.entries(FACETS) as [
        CampaignFacet,
        (typeof FACETS)[CampaignFacet],
      ][])
        if (v.changed?.includes(f)) for (const k of controls) Object.assign(current, { [k]: v[k] });
      v = current;
      errors = Object.fromEntries(
        stale.map((f) => [
          FACETS[f].under,
          `Changed elsewhere after you opened this form: ${holdsNow(f, c, devices, tz)}. What you typed is kept here: save again to replace it.`,
        ]),
      );
    }
    sendPage(
      ctx,
      layout(
        pc,
        `Edit ${c.name}`,
        html`${breadcrumbs([
          ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
          [c.name, path],
          ['Edit', null],
        ])}
<h1>Edit campaign</h1>
${general ? notice('error', general) : ''}
${stale && editable ? notice('warn', 'This campaign was changed elsewhere after you opened this form; here is what it holds now. The fields you changed keep what you typed; nothing was saved yet.') : ''}
${
  editable
    ? campaignForm(pc, `${path}/edit`, devices, v ?? valuesFrom(c, tz), errors, false, 'Save changes')
    : notice('warn', `A campaign that is ${c.state} cannot be changed. Budgets can still be topped off.`)
}`,
      ),
      stale && editable ? 409 : Object.keys(errors).length || general ? 400 : 200,
    );
  };

  /**
   * Why a cap cannot be set, when it is below the recipients the campaign already holds: a cap
   * deletes no recipient, and it counts the links held at once, so it would only be a cap that is
   * already broken. Refused in words under the field (a recipient added meanwhile, between this
   * count and the save, is not caught: the recipient service keeps new ones within the cap).
   */
  const capBelowRecipients = async (projectId: string, ctx: Context, cap: number | null) => {
    if (cap === null) return undefined;
    let total: number;
    try {
      total = (
        await deps.recipients.list(projectId, ctx.params.cid, { limit: 1, offset: 0 }, ctx.state.requestId)
      ).total;
    } catch {
      const current = await getCampaign(d, projectId, ctx.params.cid);
      // Unchanged or raised: nothing to check against.
      if (current.recipientCap !== null && cap >= current.recipientCap) return undefined;
      return 'The recipients could not be counted right now, so a lower cap cannot be checked. Try again in a moment.';
    }
    if (total <= cap) return undefined;
    return `This campaign already has ${total} recipients: enter ${total} or more, or delete recipients first. A cap does not delete recipients.`;
  };

  r.get('/p/:pid/campaigns/:cid/edit', (ctx) => editPage(ctx));
  // Saves only what the operator changed from what the form showed (its fingerprints), so a form
  // opened before another tab's save never undoes it; a field changed in both is not saved over.
  r.post('/p/:pid/campaigns/:cid/edit', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const form = formOf(ctx);
    const { values, input, errors } = parseCampaignForm(form);
    // A second round only when another save came between this one's read and its write.
    for (let round = 0; ; round++) {
      const c = await getCampaign(d, pc.project.id, ctx.params.cid);
      const current = campaignFacets(c);
      // A refused form keeps what it showed, so a later save still knows what the operator changed.
      values.base = baseFrom(form, current);
      if (!input) return editPage(ctx, values, errors);
      const { changed, conflicts } = compareWithBase(form, campaignFacets(input), current);
      values.changed = changed;
      if (conflicts.length) return editPage(ctx, values, {}, undefined, conflicts);
      const patch: UpdateCampaignInput = {};
      for (const f of changed) for (const k of FACETS[f].fields) Object.assign(patch, { [k]: input[k] });
      try {
        if (changed.length > 0) {
          validate('patch-campaign', patch);
          if ('recipientCap' in patch) {
            const capError = await capBelowRecipients(pc.project.id, ctx, patch.recipientCap ?? null);
            if (capError) return editPage(ctx, values, { recipientCap: capError });
          }
          await updateCampaign(actingAs(d, pc), pc.project.id, c.id, patch, { expectedVersion: c.version });
        }
        ctx.status = 303;
        return ctx.redirect(`${campaignPath(pc.project.id, ctx.params.cid)}?done=updated`);
      } catch (err) {
        if (err instanceof AppError && err.code === 'conflict') {
          if ((err.details as { reason?: string }).reason === 'version_changed' && round === 0) continue;
          return editPage(ctx, values, {}, err.message);
        }
        return editPage(ctx, values, fieldErrorsOf(err, POINTER_FIELDS, POINTER_LABELS));
      }
    }
  });

  // Launch, halt and delete: a GET shows what will happen; the POST does it.
  const confirmPage = async (ctx: Context, action: 'launch' | 'halt' | 'delete') => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const c = await getCampaign(d, pc.project.id, ctx.params.cid);
    const tz = pc.operator?.timeZone ?? 'UTC';
    const path = campaignPath(pc.project.id, c.id);
    const now = d.clock();
    let explanation: SafeHtml;
    let possible = true;
    if (action === 'launch') {
      possible = c.launchedAt === null && Date.parse(c.endDate) > now.getTime();
      const startsNow = Date.parse(c.startDate) <= now.getTime();
      explanation = possible
        ? html`<ul>
<li>${startsNow ? html`The campaign becomes <strong>active at once</strong>: every active link of it opens for customers now.` : html`The campaign becomes <strong>upcoming</strong> and turns active at ${formatInstant(c.startDate, tz)}; its links open then.`}</li>
<li>It ends at ${formatInstant(c.endDate, tz)}; after that its links show a neutral unavailable message.</li>
<li>Once it is active, recipients can no longer be created or changed (a link can still be disabled, or its recipient deleted, here), and the campaign itself (schedule, budget mode, price, recipient cap) can no longer be edited. Top-offs can still be added: each takes the price set now, unless it is given a price of its own, which applies to its conversations only.</li>
<li>${c.budgetMode === 'fixed' ? html`The fixed price of ${formatMoney(c.fixedPrice)} is billed in this month.` : c.allowance.included === null ? 'The budget is unlimited until you add a top-off.' : html`${c.allowance.remaining} conversations remain in the budget.`}</li>
</ul>`
        : html`<p>${c.launchedAt ? 'This campaign was already launched.' : 'Its end date has passed: change the schedule first.'}</p>`;
    } else if (action === 'delete') {
      possible = c.launchedAt === null;
      const count = await deps.recipients
        .list(pc.project.id, c.id, { limit: 1, offset: 0 }, ctx.state.requestId)
        .then((l) => (l.total === 1 ? '1 recipient' : `${l.total} recipients`))
        .catch(() => 'recipients');
      explanation = possible
        ? html`<ul>
<li>The campaign is deleted with its ${count}: their links stop working, and API clients no longer find the campaign. <strong>This cannot be undone.</strong></li>
<li>Its top-offs go with it. A draft has had no conversations, so nothing of it is billed.</li>
</ul>`
        : html`<p>Only a draft can be deleted; this one was launched. Its conversations stay on its statements. To stop it, halt it.</p>`;
    } else {
      possible = c.state === 'upcoming' || c.state === 'active';
      explanation = possible
        ? html`<ul>
<li>The campaign <strong>ends now</strong> and counts as completed from this moment. This cannot be undone.</li>
<li>Every link of it shows a neutral unavailable message; conversations in progress end at their next message.</li>
<li>Conversations already started stay billed; the remaining budget is not used.</li>
</ul>`
        : html`<p>Only an upcoming or active campaign can be halted; this one is ${c.state}.</p>`;
    }
    const verb = { launch: 'Launch', halt: 'Halt', delete: 'Delete' }[action];
    sendPage(
      ctx,
      layout(
        pc,
        `${verb} ${c.name}`,
        html`${breadcrumbs([
          ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
          [c.name, path],
          [verb, null],
        ])}
<h1>${verb} “${c.name}”?</h1>
<p>${stateBadge(c)} ${timingText(c)}</p>
${explanation}
${confirmOrBack(pc, {
  action: possible ? `${path}/${action}` : null,
  button: `${verb} campaign`,
  danger: action !== 'launch',
  hidden: action === 'delete' ? onceField() : undefined,
  back: path,
  backLabel: 'Back to the campaign',
})}`,
      ),
    );
  };
  r.get('/p/:pid/campaigns/:cid/launch', (ctx) => confirmPage(ctx, 'launch'));
  r.get('/p/:pid/campaigns/:cid/halt', (ctx) => confirmPage(ctx, 'halt'));
  r.get('/p/:pid/campaigns/:cid/delete', (ctx) => confirmPage(ctx, 'delete'));
  r.post('/p/:pid/campaigns/:cid/delete', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    // Once per form: sent again, it is answered with the list the first one led to, not a 404.
    await actOnce(d, ctx, async () => {
      await deleteCampaign(actingAs(d, pc), pc.project.id, ctx.params.cid);
      return `${projectPath(pc.project.id)}/campaigns?done=campaign-deleted`;
    });
  });
  r.post('/p/:pid/campaigns/:cid/launch', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    await launchCampaign(actingAs(d, pc), pc.project.id, ctx.params.cid);
    ctx.status = 303;
    ctx.redirect(`${campaignPath(pc.project.id, ctx.params.cid)}?done=launched`);
  });
  r.post('/p/:pid/campaigns/:cid/halt', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    await haltCampaign(actingAs(d, pc), pc.project.id, ctx.params.cid);
    ctx.status = 303;
    ctx.redirect(`${campaignPath(pc.project.id, ctx.params.cid)}?done=halted`);
  });

  r.post('/p/:pid/campaigns/:cid/top-offs', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const form = formOf(ctx);
    // Once per form: the same form sent again is answered with the first one's page.
    await actOnce(d, ctx, async () => {
      const errors: FieldErrors = {};
      const conversations = intField(form, 'conversations', errors, { min: 1, max: 100_000_000 });
      if (conversations === null) errors.conversations ??= 'Enter a whole number of conversations.';
      // Parsed and limited as the campaign form's price is.
      const price = moneyField(form, 'price', errors);
      if (conversations === null || Object.keys(errors).length) {
        await campaignPage(ctx, {
          topOffErrors: errors,
          topOffValues: {
            conversations: form.get('conversations'),
            price: form.get('price'),
            shownPrice: form.get('shownPrice'),
          },
        });
        return undefined;
      }
      // A price left as the form showed it (or left empty) is the campaign's: the top-off captures
      // the price in force as it is added, as it always did; only a price typed is its own.
      const shown = moneyField(form, 'shownPrice', {});
      const own = price !== null && price !== shown ? { pricePerConversation: price } : {};
      await addTopOff(actingAs(d, pc), pc.project.id, ctx.params.cid, { conversations, ...own });
      return `${campaignPath(pc.project.id, ctx.params.cid)}?done=topped-off#budget`;
    });
  });
  // A refused top-off's page is answered from this address, which the address bar then shows:
  // opened as a page (Enter in the address bar, a bookmark) it leads to the form, not to a 404.
  r.get('/p/:pid/campaigns/:cid/top-offs', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    ctx.status = 303;
    ctx.redirect(`${campaignPath(pc.project.id, ctx.params.cid)}#budget`);
  });

  const DONE: Record<string, string> = {
    created: 'Campaign created as a draft.',
    updated: 'Changes saved.',
    launched: 'Campaign launched.',
    halted: 'Campaign halted.',
    'topped-off': 'Top-off added; its price is in the table of top-offs.',
  };

  const campaignPage = async (
    ctx: Context,
    extra: {
      topOffErrors?: FieldErrors;
      topOffValues?: { conversations: string; price: string; shownPrice: string };
    } = {},
  ) => {
    const pc = await projectContext(deps, ctx, 'campaigns');
    const c = await getCampaign(d, pc.project.id, ctx.params.cid);
    const tz = pc.operator?.timeZone ?? 'UTC';
    const path = campaignPath(pc.project.id, c.id);
    const devices = await listDevices(d, pc.project.id);
    const device = devices.find((x) => x.id === c.deviceId);
    const bucket = Date.parse(c.endDate) - Date.parse(c.startDate) <= 3 * 86400_000 ? 'hour' : 'day';
    const points = await conversationsOverTime(d.pool, c.id, bucket, tz);
    let recipients: { total: number; recipients: RecipientJson[] } = { total: 0, recipients: [] };
    let recipientsError: string | undefined;
    try {
      recipients = await deps.recipients.list(
        pc.project.id,
        c.id,
        { limit: 10, offset: 0 },
        ctx.state.requestId,
      );
    } catch (err) {
      recipientsError = err instanceof AppError ? err.message : 'Recipients are unavailable right now.';
    }
    const done = DONE[String(ctx.query.done ?? '')];
    const a = c.allowance;
    const editable = isEditable(c.state);
    const month = d.clock().toISOString().slice(0, 7);
    const topOffErrors = extra.topOffErrors ?? {};
    const refused = Object.keys(topOffErrors).length > 0;
    // Prefilled with the price in force; a refused form keeps what was typed, and what it showed.
    const inForce = moneyInput(c.pricePerConversation);
    const topOffValues = extra.topOffValues ?? { conversations: '', price: inForce, shownPrice: inForce };
    const topOffForm = html`<form method="post" action="${path}/top-offs">
  ${csrfField(pc)}${onceField()}
  ${field({ name: 'conversations', label: 'Add conversations', type: 'number', value: topOffValues.conversations, required: true, error: topOffErrors.conversations, attrs: html` min="1" step="1" inputmode="numeric"` })}
  <input type="hidden" name="shownPrice" value="${topOffValues.shownPrice}">
  ${field({ name: 'price', label: 'Price per conversation', value: topOffValues.price, hint: topOffPriceHint(c.pricePerConversation), error: topOffErrors.price, attrs: html` inputmode="decimal"` })}
  <div class="actions"><button type="submit">Add top-off</button></div>
</form>`;
    sendPage(
      ctx,
      layout(
        pc,
        c.name,
        html`${breadcrumbs([
          ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
          [c.name, null],
        ])}
${done ? notice('ok', done) : ''}
${ctx.query[RESENT] === '1' && ctx.query.done === 'topped-off' ? notice('warn', 'That form had already been sent: its top-off was added once, not again. To add another, use the form below.') : ''}
<h1>${c.name}</h1>
${
  // At the top, where the script focuses it: the form is far down the page, out of sight.
  refused ? errorSummary(topOffErrors, topOffForm, 'The top-off was not added:') : ''
}
<p>${stateBadge(c)} ${timingText(c)}</p>
${pastStartNote(c, d.clock())}
<div class="actions">
  ${editable ? html`<a class="button secondary" href="${path}/edit">Edit</a>` : ''}
  ${c.state === 'draft' ? html`<a class="button" href="${path}/launch">Launch…</a>` : ''}
  ${c.state === 'upcoming' || c.state === 'active' ? html`<a class="button danger" href="${path}/halt">Halt…</a>` : ''}
  ${c.state === 'draft' ? html`<a class="button danger" href="${path}/delete">Delete…</a>` : ''}
  <a class="button secondary" href="${path}/recipients">Recipients</a>
  <a class="button secondary" href="${path}/statement?month=${month}">Statement</a>
</div>
<dl class="facts">
  <dt>Device</dt><dd>${device ? html`<a href="${projectPath(pc.project.id)}/devices/${device.id}">${device.name}</a>` : c.deviceId}</dd>
  <dt>Starts</dt><dd>${formatInstant(c.startDate, tz)}</dd>
  <dt>Ends</dt><dd>${formatInstant(c.endDate, tz)}</dd>
  ${c.launchedAt ? html`<dt>Launched</dt><dd>${formatInstant(c.launchedAt, tz)}</dd>` : ''}
  ${c.haltedAt ? html`<dt>Halted</dt><dd>${formatInstant(c.haltedAt, tz)}</dd>` : ''}
  <dt>Budget mode</dt><dd>${c.budgetMode === 'metered' ? `metered, ${c.pricePerConversation === null ? 'no price (bills nothing)' : `${formatMoney(c.pricePerConversation)} per conversation`}` : `fixed price ${formatMoney(c.fixedPrice)}`}</dd>
  <dt>Recipient cap</dt><dd>${c.recipientCap === null ? 'none' : c.recipientCap}</dd>
  <dt>Id</dt><dd><code>${c.id}</code></dd>
</dl>

<h2 id="budget">Allowance</h2>
${budgetWarning(c)}
<p id="allowance-text">${allowanceText(c)}</p>
${
  a.included !== null
    ? html`<div class="meter"><label for="allowance-meter">Budget used</label>
<meter id="allowance-meter" min="0" max="${a.included}" low="${Math.ceil(a.included * 0.75)}" high="${Math.ceil(a.included * (1 - LOW_BUDGET_SHARE))}" optimum="0" value="${a.used}">${a.used} of ${a.included}</meter></div>`
    : ''
}
${
  c.budgetMode === 'metered'
    ? html`<h3>Top-offs</h3>
${topOffNote(c)}
${
  c.topOffs?.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Top-offs table, scrolls sideways"><table><thead><tr><th scope="col">Added</th><th scope="col" class="num">Conversations</th><th scope="col" class="num">Price captured</th></tr></thead>
<tbody>${c.topOffs.map((t) => html`<tr><td>${formatInstant(t.createdAt, tz)}</td><td class="num">${t.conversations}</td><td class="num">${formatMoney(t.pricePerConversation)}</td></tr>`)}</tbody></table></div>`
    : html`<p class="meta">No top-off yet: the campaign is unlimited. The first top-off caps it${
        // The allowance counts every conversation against the top-offs, so those already made
        // use up the first one (and are billed at its price): an operator should know before.
        c.allowance.used > 0
          ? `, and the ${c.allowance.used} conversation${c.allowance.used === 1 ? '' : 's'} made so far count against it and are billed at its price`
          : ''
      }.</p>`
}
${topOffForm}`
    : ''
}

<h2>Conversations over time</h2>
${barChart(points, bucket, tz)}

<h2>Recipients</h2>
${
  recipientsError
    ? notice('warn', recipientsError)
    : html`<p>${recipients.total} recipients${c.recipientCap !== null ? ` of at most ${c.recipientCap}` : ''}. <a href="${path}/recipients">Manage recipients</a>${editable ? html` · <a href="${path}/recipients/import">Import a CSV file</a>` : ''}</p>
${
  recipients.recipients.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Recipients table, scrolls sideways"><table><thead><tr><th scope="col">Recipient</th><th scope="col">Status</th><th scope="col" class="num">Conversations</th></tr></thead><tbody>
${recipients.recipients.map((x) => html`<tr><td><a href="${path}/recipients/${x.id}">${x.label ?? x.externalId ?? x.id}</a></td><td>${recipientBadge(x)}</td><td class="num">${x.interactionCount}</td></tr>`)}
</tbody></table></div>`
    : ''
}`
}`,
      ),
      refused ? 400 : 200,
    );
  };
  r.get('/p/:pid/campaigns/:cid', (ctx) => campaignPage(ctx));
}
