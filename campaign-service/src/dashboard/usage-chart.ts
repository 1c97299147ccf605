import type { Pool } from 'pg';
import { html, type SafeHtml } from './html';

/** How many buckets the chart shows: the most recent ones, up to the last with a conversation. */
export const CHART_BUCKETS = 48;

/**
 * Conversations started per bucket (hour or day, in `timeZone`), from the quarter-hour counts:
 * every bucket from the first with a conversation to the last, those without any as zero, and of
 * them only the last CHART_BUCKETS.
 */
export async function conversationsOverTime(
  pool: Pool,
  campaignId: string,
  bucket: 'hour' | 'day',
  timeZone: string,
): Promise<Array<{ at: string; count: number }>> {
  // The gaps are filled from UTC quarter hours rather than local hours or days, because every
  // quarter lies in one local bucket (see migration 012): so each bucket is a local hour or day
  // that exists, once, even one that clocks skip into or repeat. The series starts a little more
  // than CHART_BUCKETS buckets before the last quarter (local buckets can be longer than an hour
  // or a day when clocks go back), so it stays small, and the first bucket kept is whole.
  const { rows } = await pool.query<{ bucket: string; count: string }>(
    `WITH q AS (
       SELECT quarter, conversations FROM campaign_usage_quarters WHERE campaign_id = $1 AND conversations > 0
     ), span AS (
       SELECT greatest(min(quarter), max(quarter) - $4 * INTERVAL '1 hour') AS lo, max(quarter) AS hi FROM q
     ), buckets AS (
       SELECT to_char(date_trunc($2, s.quarter AT TIME ZONE $3), 'YYYY-MM-DD"T"HH24:MI') AS bucket,
              coalesce(sum(q.conversations), 0) AS count
         FROM span, generate_series(span.lo, span.hi, INTERVAL '15 minutes') AS s (quarter)
         LEFT JOIN q ON q.quarter = s.quarter
        GROUP BY 1 ORDER BY 1 DESC LIMIT $5
     )
     SELECT bucket, count FROM buckets ORDER BY bucket`,
    [campaignId, bucket, timeZone, (CHART_BUCKETS + 2) * (bucket === 'day' ? 24 : 1), CHART_BUCKETS],
  );
  return rows.map((r) => ({ at: r.bucket, count: Number(r.count) }));
}

/**
 * The chart's text size on a phone, in the chart's own units (set in assets.styles.ts): the chart
 * is drawn there at about half its 600 units, so its text must be about twice the desktop's 11 to
 * be read. Text is taken to be at most 0.6 of its size wide a character, to make room for it.
 */
export const CHART_PHONE_TEXT = 20;
const textWidth = (text: string) => text.length * 0.6 * CHART_PHONE_TEXT;

/**
 * An inline SVG bar chart (no script, no external assets) with a text alternative: the same
 * figures as a table for screen readers. One bar per hour or day, as conversationsOverTime gives.
 */
export function barChart(
  points: Array<{ at: string; count: number }>,
  bucket: 'hour' | 'day',
  timeZone: string,
): SafeHtml {
  if (points.length === 0) return html`<p class="meta">No conversations yet.</p>`;
  const shown = points.slice(-CHART_BUCKETS);
  const max = Math.max(...shown.map((p) => p.count));
  const width = 600;
  const height = 200;
  // Room on the left for the peak's figure at the phone's text size.
  const pad = { left: Math.max(36, Math.ceil(textWidth(String(max))) + 10), bottom: 28, top: 10, right: 8 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const slot = plotW / shown.length;
  const barW = Math.min(40, Math.max(2, slot * 0.7));
  const label = (at: string) =>
    bucket === 'day' ? at.slice(5, 10) : `${at.slice(5, 10)} ${at.slice(11, 16)}`;
  const every = Math.ceil(shown.length / 8);
  // A phone's larger text leaves room for every other label only, and not for one that would run
  // off the chart's edge: the others are shown on wider screens alone.
  const onPhone = (i: number, x: number, text: string) =>
    (i / every) % 2 === 0 && x - textWidth(text) / 2 >= 0 && x + textWidth(text) / 2 <= width;
  const bars = shown.map((p, i) => {
    const h = max === 0 ? 0 : (p.count / max) * plotH;
    const x = pad.left + i * slot + (slot - barW) / 2;
    const labelX = pad.left + i * slot + slot / 2;
    return html`<rect class="bar" x="${x.toFixed(1)}" y="${(pad.top + plotH - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}"><title>${label(p.at)}: ${p.count}</title></rect>${
      i % every === 0
        ? html`<text x="${labelX.toFixed(1)}" y="${height - 8}" text-anchor="middle"${onPhone(i, labelX, label(p.at)) ? '' : html` class="wide-only"`}>${label(p.at)}</text>`
        : ''
    }`;
  });
  return html`<figure>
<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title">
  <title id="chart-title">Conversations per ${bucket}, ${shown.length} ${bucket}s up to the last with a conversation; peak ${max}</title>
  <line class="axis" x1="${pad.left}" y1="${pad.top + plotH}" x2="${width - pad.right}" y2="${pad.top + plotH}"></line>
  <text x="${pad.left - 6}" y="${pad.top + 10}" text-anchor="end">${max}</text>
  <text x="${pad.left - 6}" y="${pad.top + plotH}" text-anchor="end">0</text>
  ${bars}
</svg>
<figcaption class="meta">Conversations started per ${bucket} (${bucket}s in ${timeZone}). One bar per ${bucket}, those without conversations included, up to the latest conversation (at most ${CHART_BUCKETS}).</figcaption>
</figure>
<details><summary>Show the figures</summary><div class="table-wrap" tabindex="0" role="region" aria-label="Conversation figures table, scrolls sideways"><table>
<thead><tr><th scope="col">${bucket === 'day' ? 'Day' : 'Hour'} (${timeZone})</th><th scope="col" class="num">Conversations</th></tr></thead>
<tbody>${shown.map((p) => html`<tr><td>${p.at.replace('T', ' ')}</td><td class="num">${p.count}</td></tr>`)}</tbody>
</table></div></details>`;
}
