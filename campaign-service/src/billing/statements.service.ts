import { campaignNotFound } from '@outreach/platform';
import type { Pool } from 'pg';
import type { CampaignDeps } from '../deps';
import { invalidField } from '../problems';
import { assertProject } from '../projects/projects.service';
import {
  type BillableUsage,
  type CampaignStatement,
  campaignStatement,
  isMonth,
  type ProjectStatement,
  projectStatement,
} from './statement';

interface BillRow {
  id: string;
  name: string;
  budget_mode: 'metered' | 'fixed';
  price_per_conversation: string | null;
  fixed_price: string | null;
  launched_at: Date | null;
}

const num = (v: string | null) => (v === null ? null : Number(v));

function checkMonth(month: string | undefined): string {
  if (month === undefined || !isMonth(month)) throw invalidField('/month', 'pattern', 'must be YYYY-MM');
  return month;
}

/**
 * A campaign's conversations before and within `month` (YYYY-MM, UTC), from its quarter-hour
 * counts; earlier months count too, as their conversations consumed the oldest top-offs.
 */
export async function billableUsage(pool: Pool, campaignId: string, month: string): Promise<BillableUsage> {
  const { rows } = await pool.query<{ before: string; in_month: string }>(
    `WITH month AS (
       SELECT to_date($2, 'YYYY-MM')::timestamp AT TIME ZONE 'UTC' AS first,
              (to_date($2, 'YYYY-MM') + interval '1 month')::timestamp AT TIME ZONE 'UTC' AS next
     )
     SELECT coalesce(sum(q.conversations) FILTER (WHERE q.quarter < m.first), 0) AS before,
            coalesce(sum(q.conversations) FILTER (WHERE q.quarter >= m.first), 0) AS in_month
       FROM month m LEFT JOIN campaign_usage_quarters q ON q.campaign_id = $1 AND q.quarter < m.next
      GROUP BY m.first`,
    [campaignId, month],
  );
  return { before: Number(rows[0].before), inMonth: Number(rows[0].in_month) };
}

async function statementFor(deps: CampaignDeps, row: BillRow, month: string): Promise<CampaignStatement> {
  const [topOffs, usage] = await Promise.all([
    deps.pool.query<{
      id: string;
      created_at: Date;
      conversations: number;
      price_per_conversation: string | null;
    }>(
      'SELECT id, created_at, conversations, price_per_conversation FROM top_offs WHERE campaign_id = $1 ORDER BY created_at, seq',
      [row.id],
    ),
    billableUsage(deps.pool, row.id, month),
  ]);
  return campaignStatement(
    {
      id: row.id,
      name: row.name,
      budgetMode: row.budget_mode,
      pricePerConversation: num(row.price_per_conversation),
      fixedPrice: num(row.fixed_price),
      launchedAt: row.launched_at,
    },
    topOffs.rows.map((t) => ({
      id: t.id,
      createdAt: t.created_at,
      conversations: t.conversations,
      pricePerConversation: num(t.price_per_conversation),
    })),
    usage,
    month,
  );
}

/** A campaign's statement for `month` (YYYY-MM, UTC). */
export async function getCampaignStatement(
  deps: CampaignDeps,
  projectId: string,
  campaignId: string,
  month: string | undefined,
): Promise<CampaignStatement> {
  const m = checkMonth(month);
  const { rows } = await deps.pool.query<BillRow>(
    'SELECT * FROM campaigns WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL',
    [campaignId, projectId],
  );
  if (rows.length === 0) throw campaignNotFound(campaignId);
  return statementFor(deps, rows[0], m);
}

/** The project's statement for `month`: every campaign with a line, and the total. */
export async function getProjectStatement(
  deps: CampaignDeps,
  projectId: string,
  month: string | undefined,
): Promise<ProjectStatement> {
  const m = checkMonth(month);
  await assertProject(deps.pool, projectId);
  const { rows } = await deps.pool.query<BillRow>(
    // A deleted campaign was never launched, so it has nothing to bill.
    'SELECT * FROM campaigns WHERE project_id = $1 AND deleted_at IS NULL ORDER BY created_at, id COLLATE "C"',
    [projectId],
  );
  const statements = [];
  for (const row of rows) statements.push(await statementFor(deps, row, m));
  return projectStatement(projectId, m, statements);
}
