import type Router from '@koa/router';
import type { Context } from 'koa';
import { baseContext, type DashboardDeps, formOf, sendPage } from './context';
import { html } from './html';
import { csrfField, layout, notice, select, withErrorSummary } from './layout';
import { setOperatorTimeZone } from './operators.service';
import { isTimeZone, timeZones } from './time';

/**
 * The operator's display time zone. It changes only here, never as a side effect of the zone a
 * campaign's schedule was typed in, so every page keeps showing times in one zone the footer names.
 */
export function registerTimeZoneRoutes(r: Router, deps: DashboardDeps): void {
  const page = async (ctx: Context, error?: string) => {
    const pc = await baseContext(deps, ctx);
    const current = pc.operator?.timeZone ?? 'UTC';
    sendPage(
      ctx,
      layout(
        pc,
        'Time zone',
        html`<h1>Time zone of the dashboard</h1>
${ctx.query.done === 'saved' ? notice('ok', `Times are now shown in ${current}.`) : ''}
${withErrorSummary(
  error ? { timeZone: error } : {},
  html`<form method="post" action="/dashboard/time-zone" novalidate>
  ${csrfField(pc)}
  ${select({
    name: 'timeZone',
    label: 'Show times in',
    options: timeZones().map((z) => [z, z]),
    value: current,
    hint: 'Every page shows dates and times in this zone and names it. Campaign schedules are stored as UTC instants.',
    error,
    // Never chosen: offer the browser's own zone, as the campaign form does.
    attrs: pc.operator?.timeZoneChosen ? undefined : html` data-tz-auto="1"`,
  })}
  <div class="actions"><button type="submit">Save</button><a class="button secondary" href="/dashboard">Cancel</a></div>
</form>`,
)}`,
      ),
      error ? 400 : 200,
    );
  };

  r.get('/time-zone', (ctx) => page(ctx));
  r.post('/time-zone', async (ctx) => {
    const pc = await baseContext(deps, ctx);
    const timeZone = formOf(ctx).get('timeZone');
    if (!isTimeZone(timeZone)) return page(ctx, 'Choose a time zone from the list.');
    await setOperatorTimeZone(deps.domain, pc.operator!.id, timeZone);
    ctx.status = 303;
    ctx.redirect('/dashboard/time-zone?done=saved');
  });
}
