import type { Project } from '../projects/projects.service';
import { html, raw, type SafeHtml } from './html';
import type { Operator } from './operators.service';

/** Where a page sits: who is signed in, in which project, and which section is current. */
export interface PageContext {
  operator?: Operator;
  csrfToken?: string;
  project?: Project;
  projects?: Project[];
  section?: 'campaigns' | 'devices' | 'api-keys' | 'billing' | 'members' | 'activity';
  /** The page was reached from a form sent before whose result is not known (see form-once.ts). */
  sentBefore?: boolean;
}

/** The query parameter of a page reached from a one-time form sent before, its result not known. */
export const SENT_BEFORE = 'sent-before';

/** The hidden CSRF field every form carries. */
export function csrfField(pc: PageContext): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${pc.csrfToken ?? ''}">`;
}

/**
 * A recipient's link as its customer finds it, in words (never colour alone): disabled, used up
 * (its total limit reached: the link answers `link_disabled` as a disabled one does), or active.
 */
export function recipientBadge(x: {
  isActive: boolean;
  interactionCount: number;
  maxTotalInteractions: number | null;
}): SafeHtml {
  if (!x.isActive) return html`<span class="badge off">disabled</span>`;
  if (x.maxTotalInteractions !== null && x.interactionCount >= x.maxTotalInteractions)
    return html`<span class="badge used-up">used up</span>`;
  return html`<span class="badge on">active</span>`;
}

/** Base path of a project's pages. */
export const projectPath = (projectId: string) => `/dashboard/p/${encodeURIComponent(projectId)}`;

function nav(pc: PageContext): SafeHtml {
  if (!pc.project) return html``;
  const base = projectPath(pc.project.id);
  const link = (section: PageContext['section'], href: string, label: string) =>
    html`<li><a href="${href}"${pc.section === section ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<nav aria-label="Project sections" class="sections"><ul>
    ${link('campaigns', `${base}/campaigns`, 'Campaigns')}
    ${link('devices', `${base}/devices`, 'Devices')}
    ${link('api-keys', `${base}/api-keys`, 'API Keys')}
    ${link('billing', `${base}/billing`, 'Billing')}
    ${link('members', `${base}/members`, 'Operators')}
    ${link('activity', `${base}/activity`, 'Activity')}
  </ul></nav>`;
}

/** A breadcrumb trail; the last item is the current page. */
export function breadcrumbs(items: Array<[string, string | null]>): SafeHtml {
  return html`<nav aria-label="Breadcrumb" class="crumbs"><ol>${items.map(([label, href], i) =>
    i === items.length - 1 || !href
      ? html`<li><span aria-current="page">${label}</span></li>`
      : html`<li><a href="${href}">${label}</a></li>`,
  )}</ol></nav>`;
}

/** The complete document around a page body. */
export function layout(pc: PageContext, title: string, body: SafeHtml): string {
  // With one project the home page leads straight to it, so a new one is made from here.
  const projectSwitch = html`${
    pc.projects && pc.projects.length > 1 ? html`<a href="/dashboard" class="switch">Switch project</a>` : ''
  }<a href="/dashboard/projects/new">New project</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${title} · Outreach dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script src="/dashboard/assets/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <div class="brand"><a href="/dashboard">Outreach</a>${pc.project ? html` <span class="project">${pc.project.name}</span>` : ''}</div>
  ${
    pc.operator
      ? html`<div class="who">${projectSwitch}<span class="email">${pc.operator.email}</span><a href="/dashboard/account">Account</a>
    <form method="post" action="/dashboard/sign-out" class="inline">${csrfField(pc)}<button type="submit" class="link">Sign out</button></form></div>`
      : ''
  }
</header>
${nav(pc)}
<main id="main" tabindex="-1">
${pc.sentBefore ? notice('warn', 'That form had been sent before, but its answer was lost, so it is not known whether it was done. Check the page for its result before sending it again.') : ''}
${body}
</main>
<footer class="foot"><p>Times are shown in ${pc.operator?.timeZone ?? 'UTC'}.${pc.operator ? html` <a href="/dashboard/time-zone">Change the time zone</a>.` : ''} Amounts are in minor units ÷ 100.</p></footer>
</body>
</html>`.value;
}

/** The query string of one page of a filtered list: the filters that are set, then the page. */
export function pageQuery(filters: Record<string, string | undefined>, page: number): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
  params.set('page', String(page));
  return `?${params}`;
}

/** The previous and next links of a paged list (`href` of a page number), or nothing on one page. */
export function pager(href: (page: number) => string, page: number, pages: number): SafeHtml {
  return pageLinks(
    page > 0 ? [href(page - 1), 'Previous page'] : null,
    page + 1 < pages ? [href(page + 1), 'Next page'] : null,
  );
}

/** A list's links to the pages before and after this one ([href, label], null for none), or nothing. */
export function pageLinks(before: [string, string] | null, after: [string, string] | null): SafeHtml {
  if (!before && !after) return html``;
  return html`<nav aria-label="Pages" class="actions">
  ${before ? html`<a href="${before[0]}">${before[1]}</a>` : ''}
  ${after ? html`<a href="${after[0]}">${after[1]}</a>` : ''}
</nav>`;
}

/**
 * The end of a confirmation page: the form that does the action (posting to `action`, with the
 * `hidden` fields) beside a Cancel back, or, when it cannot be done (`action` null), the way back.
 */
export function confirmOrBack(
  pc: PageContext,
  o: {
    action: string | null;
    button: string;
    danger: boolean;
    hidden?: SafeHtml;
    back: string;
    backLabel: string;
  },
): SafeHtml {
  if (o.action === null) return html`<p><a href="${o.back}">${o.backLabel}</a></p>`;
  return html`<form method="post" action="${o.action}">${csrfField(pc)}${o.hidden ?? ''}
<div class="actions"><button type="submit" class="${o.danger ? 'danger' : ''}">${o.button}</button><a class="button secondary" href="${o.back}">Cancel</a></div></form>`;
}

/** A notice box; `kind` chooses its colour and role. */
export function notice(kind: 'ok' | 'warn' | 'error', text: string | SafeHtml): SafeHtml {
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="notice ${kind}" role="${role}">${text}</div>`;
}

/**
 * The state badge of a campaign, and a second one when a halt ended it: the API's state is
 * `completed` either way, but an operator needs to tell a stopped campaign from one that ran out.
 */
export function stateBadge(c: { state: string; haltedAt?: string | null }): SafeHtml {
  return html`<span class="badge state-${c.state}">${c.state}</span>${c.haltedAt ? html` <span class="badge state-halted">halted</span>` : ''}`;
}

/** What every labelled control shares: the label, an optional hint and error, their ids. */
interface ControlOptions {
  name: string;
  /** Names the control's id (and its errors' key) when several controls share `name`. */
  id?: string;
  label: string;
  hint?: string;
  error?: string;
  required?: boolean;
}

/** The id of a field's control (or of a fieldset's own error) by its name: `f-` and the name. */
const fieldId = (name: string) => `f-${name.replace(/[^\w-]/g, '-')}`;

/**
 * Wraps a control in its field: the label, hint and error, wired to the control through
 * `aria-describedby` and `aria-invalid` so assistive technology reads them with it.
 */
function labelled(opts: ControlOptions, control: (id: string, aria: SafeHtml) => SafeHtml): SafeHtml {
  const id = fieldId(opts.id ?? opts.name);
  const described = [opts.hint ? `${id}-hint` : '', opts.error ? `${id}-err` : ''].filter(Boolean).join(' ');
  const aria = html`${described ? html` aria-describedby="${described}"` : ''}${opts.error ? html` aria-invalid="true"` : ''}`;
  return html`<div class="field${opts.error ? ' has-error' : ''}">
  <label for="${id}">${opts.label}${opts.required ? html` <span class="req">(required)</span>` : ''}</label>
  ${opts.hint ? html`<p class="hint" id="${id}-hint">${opts.hint}</p>` : ''}
  ${opts.error ? html`<p class="error" id="${id}-err">${opts.error}</p>` : ''}
  ${control(id, aria)}
</div>`;
}

/** A labelled input with its error message wired up for assistive technology. */
export function field(
  opts: ControlOptions & { value?: string | number | null; type?: string; attrs?: SafeHtml },
): SafeHtml {
  return labelled(
    opts,
    (id, aria) =>
      html`<input id="${id}" name="${opts.name}" type="${opts.type ?? 'text'}" value="${opts.value ?? ''}"${opts.required ? html` required` : ''}${aria}${opts.attrs ?? ''}>`,
  );
}

/** A labelled textarea. */
export function textarea(opts: ControlOptions & { value?: string; rows?: number }): SafeHtml {
  return labelled(
    opts,
    (id, aria) =>
      html`<textarea id="${id}" name="${opts.name}" rows="${opts.rows ?? 4}"${aria}>${opts.value ?? ''}</textarea>`,
  );
}

/** A labelled select. */
export function select(
  opts: ControlOptions & { options: Array<[string, string]>; value?: string; attrs?: SafeHtml },
): SafeHtml {
  return labelled(
    opts,
    (id, aria) => html`<select id="${id}" name="${opts.name}"${aria}${opts.attrs ?? ''}>
    ${opts.options.map(([v, l]) => html`<option value="${v}"${v === opts.value ? html` selected` : ''}>${l}</option>`)}
  </select>`,
  );
}

/**
 * Where the field `id` is in a form's markup, and what it is called there: its label, without the
 * "(required)" mark, or for a fieldset's own error (which has no label) the fieldset's legend.
 */
function placeOf(form: string, id: string): { at: number; label?: SafeHtml } {
  const at = form.indexOf(` id="${id}"`);
  if (at < 0) return { at: Number.POSITIVE_INFINITY };
  // Text of markup the form rendered, so already escaped: kept as it is, tags dropped.
  const text = (markup: string) =>
    raw(
      markup
        .replace(/<span class="req">[\s\S]*?<\/span>/g, '')
        .replace(/<[^>]*>/g, '')
        .trim(),
    );
  const label = new RegExp(`<label for="${id}">([\\s\\S]*?)</label>`).exec(form)?.[1];
  if (label !== undefined) return { at, label: text(label) };
  const before = form.slice(0, at);
  const fieldset = before.lastIndexOf('<fieldset');
  if (fieldset < 0 || fieldset < before.lastIndexOf('</fieldset>')) return { at };
  const legend = /<legend>([\s\S]*?)<\/legend>/.exec(before.slice(fieldset))?.[1];
  return { at, label: legend === undefined ? undefined : text(legend) };
}

/** A field's message after its label: "Use at most…" becomes "use at most…", "IP…" stays. */
const afterLabel = (message: string) => message.replace(/^[A-Z](?![A-Z])/, (c) => c.toLowerCase());

/**
 * A summary of form errors at the top of a form, focusable so it can be announced. Its entries
 * follow the fields' order in `form` (the markup that holds them), each naming its field by the
 * field's label and linking to it; `_`, what no single field shows, comes first without a link.
 */
export function errorSummary(errors: Record<string, string>, form: SafeHtml, general?: string): SafeHtml {
  const entries = Object.entries(errors);
  if (entries.length === 0 && !general) return html``;
  const fields = entries
    .filter(([name]) => name !== '_')
    .map(([name, message]) => ({ id: fieldId(name), message, ...placeOf(form.value, fieldId(name)) }))
    .sort((x, y) => x.at - y.at);
  return html`<div class="notice error" role="alert" tabindex="-1" id="error-summary">
  <p><strong>${general ?? 'Please correct the following:'}</strong></p>
  ${
    entries.length
      ? html`<ul>${errors._ ? html`<li>${errors._}</li>` : ''}${fields.map(
          (f) =>
            html`<li><a href="#${f.id}">${f.label ? html`${f.label}: ${afterLabel(f.message)}` : f.message}</a></li>`,
        )}</ul>`
      : ''
  }
</div>`;
}

/** A form with the summary of its errors above it (see errorSummary). */
export function withErrorSummary(errors: Record<string, string>, form: SafeHtml): SafeHtml {
  return html`${errorSummary(errors, form)}
${form}`;
}
