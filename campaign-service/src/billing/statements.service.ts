import { AppError } from '@outreach/platform';
import type { CampaignDeps } from '../deps';
import { invalidField } from '../problems';
import { assertProject } from '../projects/projects.service';
import {
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

async function statementFor(deps: CampaignDeps, row: BillRow, month: string): Promise<CampaignStatement> {
  // Conversations of earlier months matter: they consumed the oldest top-offs.
  const [topOffs, conversations] = await Promise.all([
    deps.pool.query<{
      id: string;
      created_at: Date;
      conversations: number;
      price_per_conversation: string | null;
    }>(
      'SELECT id, created_at, conversations, price_per_conversation FROM top_offs WHERE campaign_id = $1 ORDER BY created_at, seq',
      [row.id],
    ),
    deps.pool.query<{ conversation_id: string; started_at: Date }>(
      `SELECT conversation_id, started_at FROM conversations
        WHERE campaign_id = $1 AND started_at < (to_date($2, 'YYYY-MM') + interval '1 month')::timestamp AT TIME ZONE 'UTC'`,
      [row.id, month],
    ),
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
    conversations.rows.map((c) => ({ id: c.conversation_id, startedAt: c.started_at })),
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
    'SELECT * FROM campaigns WHERE id = $1 AND project_id = $2',
    [campaignId, projectId],
  );
  if (rows.length === 0) throw new AppError('not_found', 'Campaign not found.', { details: { campaignId } });
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
    'SELECT * FROM campaigns WHERE project_id = $1 ORDER BY created_at, id',
    [projectId],
  );
  const statements = [];
  for (const row of rows) statements.push(await statementFor(deps, row, m));
  return projectStatement(projectId, m, statements);
}
