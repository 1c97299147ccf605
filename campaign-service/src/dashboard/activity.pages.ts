import type Router from '@koa/router';
import { type ActivityAction, type ActivityEntry, listActivity } from '../activity/activity.service';
import { type DashboardDeps, projectContext, sendPage } from './context';
import { html, type SafeHtml } from './html';
import { layout, pageLinks, projectPath } from './layout';
import { formatInstant } from './time';

/** Entries on one page of a project's activity. */
export const ACTIVITY_PAGE = 50;

/** Each action in words, before the thing it was done to. */
export const ACTIVITY_WORDS: Record<ActivityAction, string> = {
  'campaign.created': 'Created the campaign',
  'campaign.edited': 'Edited the campaign',
  'campaign.launched': 'Launched the campaign',
  'campaign.halted': 'Halted the campaign',
  'campaign.topped_off': 'Topped off the campaign',
  'campaign.deleted': 'Deleted the campaign',
  'device.created': 'Created the device',
  'device.edited': 'Edited the device',
  'device.deleted': 'Deleted the device',
  'api_key.created': 'Created the API key',
  'api_key.revoked': 'Revoked the API key',
  'project.created': 'Created the project',
  'project.renamed': 'Renamed the project',
  'operator.invited': 'Invited',
  'operator.added': 'Added the operator',
  'operator.removed': 'Removed the operator',
  'operator.password_reset_link': 'Made a password reset link for',
};

/** One entry's "what": the action, the name of what it was done to, and its detail. */
export function activityText(e: Pick<ActivityEntry, 'action' | 'targetName' | 'detail'>): SafeHtml {
  // An action a newer release records that this one does not know is shown as recorded.
  const words = ACTIVITY_WORDS[e.action] ?? e.action;
  return html`${words} “${e.targetName}”${e.detail ? html` (${e.detail})` : ''}`;
}

/** The project's activity: who changed what, newest first. */
export function registerActivityRoutes(r: Router, deps: DashboardDeps): void {
  r.get('/p/:pid/activity', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'activity');
    // A position that is no whole number (or none) means the newest entries.
    const asked = Number(ctx.query.before);
    const before = Number.isSafeInteger(asked) && asked > 0 ? asked : undefined;
    const { entries, nextBefore } = await listActivity(deps.domain.pool, pc.project.id, {
      limit: ACTIVITY_PAGE,
      before,
    });
    const tz = pc.operator?.timeZone ?? 'UTC';
    const base = `${projectPath(pc.project.id)}/activity`;
    sendPage(
      ctx,
      layout(
        pc,
        'Activity',
        html`<h1>Activity</h1>
<p>Who changed the project's campaigns, devices, API keys, name and operators, newest first. Changes made through the admin API are shown as the admin API's.</p>
${
  entries.length === 0
    ? html`<p>${before === undefined ? 'Nothing has been recorded yet.' : html`No older entries. <a href="${base}">Back to the newest</a>.`}</p>`
    : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table><caption class="visually-hidden">Activity of this project</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th></tr></thead>
<tbody>${entries.map(
        (e) =>
          html`<tr><td>${formatInstant(e.at, tz)}</td><td>${e.actor}</td><td>${activityText(e)} <code>${e.targetId}</code></td></tr>`,
      )}</tbody></table></div>`
}
${pageLinks(
  before !== undefined ? [base, 'Newest entries'] : null,
  nextBefore !== null ? [`${base}?before=${nextBefore}`, 'Older entries'] : null,
)}`,
      ),
    );
  });
}
