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

/**
 * A campaign's conversations as billing counts them: those started before the month, which
 * consumed the oldest top-offs first, and those started in it.
 */
export interface BillableUsage {
  before: number;
  inMonth: number;
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
  usage: BillableUsage,
  month: string,
): CampaignStatement {
  if (!isMonth(month)) throw new RangeError(`month must be YYYY-MM, got ${month}`);
  const { inMonth } = usage;
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

  const campaignPrice = campaign.pricePerConversation ?? 0;
  const lines: StatementLine[] = [];
  const add = (
    kind: StatementLine['kind'],
    topOffId: string | null,
    conversations: number,
    unitPrice: number,
  ) => {
    if (conversations > 0)
      lines.push({ kind, topOffId, conversations, unitPrice, amount: conversations * unitPrice });
  };
  if (topOffs.length === 0) {
    add('unlimited', null, inMonth, campaignPrice);
    return { ...base, conversations: inMonth, lines, total: sum(lines) };
  }
  // In start order, conversation n (from 0) draws from the top-off whose room covers n, the
  // oldest first; the month's conversations are numbers before .. before + inMonth - 1.
  // A stable sort: top-offs made in the same millisecond keep the order they were given in.
  const pots = [...topOffs].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const first = usage.before;
  const end = usage.before + inMonth;
  let potStart = 0;
  for (const pot of pots) {
    const potEnd = potStart + pot.conversations;
    add('top_off', pot.id, Math.min(end, potEnd) - Math.max(first, potStart), pot.pricePerConversation ?? 0);
    potStart = potEnd;
  }
  add('overage', null, end - Math.max(first, potStart), campaignPrice);
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
