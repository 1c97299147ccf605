import type Router from '@koa/router';
import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import type { CampaignStatement, StatementLine } from '../billing/statement';
import { getCampaignStatement, getProjectStatement } from '../billing/statements.service';
import { getCampaign } from '../campaigns/campaigns.service';
import { type DashboardDeps, projectContext, sendPage } from './context';
import { formatMoney } from './forms';
import { html } from './html';
import { breadcrumbs, layout, notice, type PageContext, projectPath } from './layout';

const LINE_LABEL: Record<StatementLine['kind'], string> = {
  top_off: 'Top-off',
  unlimited: 'Unlimited (no top-off)',
  overage: 'Beyond the last top-off',
  fixed: 'Fixed price',
};

/**
 * The month asked for, or the current UTC month when none is; a month not understood is kept as
 * `refused`, so the page says so instead of showing another month's figures as if asked for.
 */
function monthOf(ctx: Context, now: Date): { month: string; refused?: string } {
  const m = String(ctx.query.month ?? '').trim();
  const current = now.toISOString().slice(0, 7);
  if (m === '') return { month: current };
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(m) ? { month: m } : { month: current, refused: m };
}

/** What a page says of a month it did not understand, with an example in the right form. */
function monthNotUnderstood(refused: string, current: string): string {
  return `The month “${refused}” was not understood: write it as year and month, such as ${current}.`;
}

/** The month of a CSV export: one not understood is refused, since a file carries no notice. */
function csvMonthOf(ctx: Context, now: Date): string {
  const { month, refused } = monthOf(ctx, now);
  if (refused !== undefined) throw new AppError('invalid_request', monthNotUnderstood(refused, month));
  return month;
}

/** A statement page asked for a month not understood: the message, and the month picker. */
function monthRefusedPage(
  ctx: Context,
  pc: PageContext,
  title: string,
  path: string,
  refused: string,
  month: string,
) {
  sendPage(
    ctx,
    layout(
      pc,
      title,
      html`<h1>${title}</h1>${notice('error', monthNotUnderstood(refused, month))}${monthNav(path, month)}`,
    ),
    400,
  );
}

function shiftMonth(month: string, by: number): string {
  const [y, m] = month.split('-').map(Number);
  const d = new Date(Date.UTC(y, m - 1 + by, 1));
  return d.toISOString().slice(0, 7);
}

/** Quotes a CSV cell (RFC 4180) and defuses spreadsheet formulas. */
export function csvCell(value: string | number): string {
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The statement rows as CSV: one line per statement line, amounts in minor units. */
export function statementCsv(month: string, statements: CampaignStatement[]): string {
  const rows: Array<Array<string | number>> = [
    [
      'month',
      'campaign_id',
      'campaign_name',
      'budget_mode',
      'line',
      'top_off_id',
      'conversations',
      'unit_price_minor',
      'amount_minor',
    ],
  ];
  for (const s of statements) {
    for (const l of s.lines) {
      rows.push([
        month,
        s.campaignId,
        s.name,
        s.budgetMode,
        l.kind,
        l.topOffId ?? '',
        l.conversations,
        l.unitPrice,
        l.amount,
      ]);
    }
  }
  return `${rows.map((r) => r.map(csvCell).join(',')).join('\r\n')}\r\n`;
}

function linesTable(s: CampaignStatement) {
  if (s.lines.length === 0) return html`<p class="meta">Nothing to bill this month.</p>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table>
<thead><tr><th scope="col">Line</th><th scope="col" class="num">Conversations</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${s.lines.map(
    (l) =>
      html`<tr><td>${LINE_LABEL[l.kind]}${l.topOffId ? html` <code>${l.topOffId}</code>` : ''}</td><td class="num">${l.conversations}</td><td class="num">${formatMoney(l.unitPrice)}</td><td class="num">${formatMoney(l.amount)}</td></tr>`,
  )}</tbody>
<tfoot><tr><th scope="row" colspan="3">Total</th><td class="num"><strong>${formatMoney(s.total)}</strong></td></tr></tfoot>
</table></div>`;
}

function monthNav(path: string, month: string) {
  return html`<form method="get" action="${path}" class="filters">
<div class="field"><label for="f-month">Month (UTC)</label><input id="f-month" name="month" type="month" value="${month}"></div>
<div class="actions"><button type="submit" class="secondary">Show</button>
<a href="${path}?month=${shiftMonth(month, -1)}">Previous month</a> <a href="${path}?month=${shiftMonth(month, 1)}">Next month</a></div>
</form>`;
}

/** Monthly statements per campaign and per project, with CSV export. */
export function registerBillingRoutes(r: Router, deps: DashboardDeps): void {
  const d = deps.domain;

  r.get('/p/:pid/billing', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'billing');
    const { month, refused } = monthOf(ctx, d.clock());
    const path = `${projectPath(pc.project.id)}/billing`;
    if (refused !== undefined) return monthRefusedPage(ctx, pc, 'Project statement', path, refused, month);
    const st = await getProjectStatement(d, pc.project.id, month);
    sendPage(
      ctx,
      layout(
        pc,
        `Statement ${month}`,
        html`<h1>Project statement — ${month}</h1>
${monthNav(path, month)}
<p><a class="button secondary" href="${path}.csv?month=${month}" download>Download CSV</a></p>
${
  st.campaigns.length === 0
    ? html`<p>No campaign has anything to bill in ${month}.</p>`
    : st.campaigns.map(
        (s) =>
          html`<section aria-labelledby="st-${s.campaignId}"><h2 id="st-${s.campaignId}"><a href="${projectPath(pc.project.id)}/campaigns/${s.campaignId}">${s.name}</a> <span class="meta">(${s.budgetMode}, ${s.conversations} conversations)</span></h2>${linesTable(s)}</section>`,
      )
}
<p class="total">Project total for ${month}: <strong id="project-total">${formatMoney(st.total)}</strong></p>`,
      ),
    );
  });

  r.get('/p/:pid/billing.csv', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'billing');
    const month = csvMonthOf(ctx, d.clock());
    const st = await getProjectStatement(d, pc.project.id, month);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.attachment(`statement-${pc.project.id}-${month}.csv`);
    ctx.body = statementCsv(month, st.campaigns);
  });

  r.get('/p/:pid/campaigns/:cid/statement', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'billing');
    const c = await getCampaign(d, pc.project.id, ctx.params.cid);
    const { month, refused } = monthOf(ctx, d.clock());
    const path = `${projectPath(pc.project.id)}/campaigns/${c.id}/statement`;
    if (refused !== undefined)
      return monthRefusedPage(ctx, pc, `Statement — ${c.name}`, path, refused, month);
    const st = await getCampaignStatement(d, pc.project.id, c.id, month);
    sendPage(
      ctx,
      layout(
        pc,
        `${c.name} statement ${month}`,
        html`${breadcrumbs([
          ['Campaigns', `${projectPath(pc.project.id)}/campaigns`],
          [c.name, `${projectPath(pc.project.id)}/campaigns/${c.id}`],
          [`Statement ${month}`, null],
        ])}
<h1>Statement — ${c.name}, ${month}</h1>
${monthNav(path, month)}
<p>${st.conversations} conversations started in ${month} (UTC). Conversations draw from the oldest top-off first, at the price it captured.</p>
${linesTable(st)}
<p><a class="button secondary" href="${path}.csv?month=${month}" download>Download CSV</a></p>`,
      ),
    );
  });

  r.get('/p/:pid/campaigns/:cid/statement.csv', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'billing');
    const month = csvMonthOf(ctx, d.clock());
    const st = await getCampaignStatement(d, pc.project.id, ctx.params.cid, month);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.attachment(`statement-${ctx.params.cid}-${month}.csv`);
    ctx.body = statementCsv(month, [st]);
  });
}
