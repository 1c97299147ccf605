/**
 * Billing of one campaign for one calendar month (UTC). Pure: the caller loads the facts.
 *
 * Metered: conversations are taken in start order and each draws from the oldest top-off
 * that still has room; it is billed at the price that top-off captured. Without any
 * top-off the campaign is unlimited and conversations are billed at the campaign's price;
 * a missing price bills nothing. Conversations past the last top-off (admitted during a
 * race at the limit) are billed at the campaign's current price.
 * Fixed: the flat total is billed in the month of launch; conversations cost 0.
 */

/** The campaign facts billing needs. */
export interface BillableCampaign {
  id: string;
  name: string;
  budgetMode: 'metered' | 'fixed';
  pricePerConversation: number | null;
  fixedPrice: number | null;
  launchedAt: Date | null;
}

/** A top-off with the price in force when it was made; pass them in the order they were made. */
export interface BillableTopOff {
  id: string;
  createdAt: Date;
  conversations: number;
  pricePerConversation: number | null;
}

/** One admitted conversation. */
export interface BillableConversation {
  id: string;
  startedAt: Date;
}

/** One line of a statement; amounts in integer minor units. */
export interface StatementLine {
  kind: 'top_off' | 'unlimited' | 'overage' | 'fixed';
  topOffId: string | null;
  conversations: number;
  unitPrice: number;
  amount: number;
}

/** A campaign's bill for a month. */
export interface CampaignStatement {
  campaignId: string;
  name: string;
  month: string;
  budgetMode: 'metered' | 'fixed';
  conversations: number;
  lines: StatementLine[];
  total: number;
}

/** A project's bill for a month: every campaign with something to show, and the sum. */
export interface ProjectStatement {
  projectId: string;
  month: string;
  campaigns: CampaignStatement[];
  total: number;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** True for `YYYY-MM`. */
export function isMonth(text: string): boolean {
  return MONTH.test(text);
}

/** The UTC month (`YYYY-MM`) an instant falls in. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** Computes a campaign's statement for `month` (`YYYY-MM`, UTC). */
export function campaignStatement(
  campaign: BillableCampaign,
  topOffs: readonly BillableTopOff[],
  conversations: readonly BillableConversation[],
  month: string,
): CampaignStatement {
  if (!isMonth(month)) throw new RangeError(`month must be YYYY-MM, got ${month}`);
  const inMonth = conversations.filter((c) => monthOf(c.startedAt) === month).length;
  const base = { campaignId: campaign.id, name: campaign.name, month, budgetMode: campaign.budgetMode };
  if (campaign.budgetMode === 'fixed') {
    const lines: StatementLine[] = [];
    if (campaign.launchedAt && monthOf(campaign.launchedAt) === month) {
      const flat = campaign.fixedPrice ?? 0;
      lines.push({ kind: 'fixed', topOffId: null, conversations: inMonth, unitPrice: 0, amount: flat });
    } else if (inMonth > 0) {
      lines.push({ kind: 'fixed', topOffId: null, conversations: inMonth, unitPrice: 0, amount: 0 });
    }
    return { ...base, conversations: inMonth, lines, total: sum(lines) };
  }

  const ordered = [...conversations].sort(
    (a, b) => a.startedAt.getTime() - b.startedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  // A stable sort: top-offs made in the same millisecond keep the order they were given in.
  const pots = [...topOffs].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const campaignPrice = campaign.pricePerConversation ?? 0;
  const byKey = new Map<string, StatementLine>();
  const add = (kind: StatementLine['kind'], topOffId: string | null, unitPrice: number) => {
    const key = `${kind}:${topOffId ?? ''}`;
    const line = byKey.get(key) ?? { kind, topOffId, conversations: 0, unitPrice, amount: 0 };
    line.conversations += 1;
    line.amount += unitPrice;
    byKey.set(key, line);
  };
  // Walk every conversation from the first: earlier months consume the oldest top-offs.
  let pot = 0;
  let usedInPot = 0;
  for (const c of ordered) {
    while (pot < pots.length && usedInPot >= pots[pot].conversations) {
      pot += 1;
      usedInPot = 0;
    }
    const billed = monthOf(c.startedAt) === month;
    if (pots.length === 0) {
      if (billed) add('unlimited', null, campaignPrice);
    } else if (pot < pots.length) {
      usedInPot += 1;
      if (billed) add('top_off', pots[pot].id, pots[pot].pricePerConversation ?? 0);
    } else if (billed) {
      add('overage', null, campaignPrice);
    }
  }
  const lines = [...byKey.values()];
  return { ...base, conversations: inMonth, lines, total: sum(lines) };
}

/** Sums campaign statements into a project statement, leaving out campaigns with nothing to show. */
export function projectStatement(
  projectId: string,
  month: string,
  statements: readonly CampaignStatement[],
): ProjectStatement {
  const campaigns = statements.filter((s) => s.lines.length > 0);
  return { projectId, month, campaigns, total: campaigns.reduce((t, s) => t + s.total, 0) };
}

function sum(lines: readonly StatementLine[]): number {
  return lines.reduce((t, l) => t + l.amount, 0);
}
