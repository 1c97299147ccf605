import {
  type BillableCampaign,
  type BillableTopOff,
  type CampaignStatement,
  monthOf,
  projectStatement,
  type StatementLine,
  campaignStatement as statementOfCounts,
} from './statement';

const d = (s: string) => new Date(s);
const metered = (price: number | null): BillableCampaign => ({
  id: 'cmp_m',
  name: 'Metered',
  budgetMode: 'metered',
  pricePerConversation: price,
  fixedPrice: null,
  launchedAt: d('2026-01-10T00:00:00.000Z'),
});
type Conversation = { id: string; startedAt: Date };
const convs = (...starts: string[]): Conversation[] =>
  starts.map((s, i) => ({ id: `cnv_${i}`, startedAt: d(s) }));

/** The statement of these conversations, counted as the service counts them. */
const campaignStatement = (
  campaign: BillableCampaign,
  topOffs: readonly BillableTopOff[],
  conversations: readonly Conversation[],
  month: string,
): CampaignStatement =>
  statementOfCounts(
    campaign,
    topOffs,
    {
      before: conversations.filter((c) => monthOf(c.startedAt) < month).length,
      inMonth: conversations.filter((c) => monthOf(c.startedAt) === month).length,
    },
    month,
  );

describe('campaignStatement, metered', () => {
  const topOffs = [
    { id: 'top_b', createdAt: d('2026-01-05T00:00:00.000Z'), conversations: 3, pricePerConversation: 150 },
    { id: 'top_a', createdAt: d('2026-01-01T00:00:00.000Z'), conversations: 2, pricePerConversation: 100 },
    { id: 'top_c', createdAt: d('2026-02-01T00:00:00.000Z'), conversations: 10, pricePerConversation: null },
  ];

  it('bills each conversation at the price of the oldest top-off with room', () => {
    // 4 conversations: 2 from top_a at 100, 2 from top_b at 150.
    const s = campaignStatement(
      metered(999),
      topOffs,
      convs(
        '2026-01-11T00:00:00.000Z',
        '2026-01-12T00:00:00.000Z',
        '2026-01-13T00:00:00.000Z',
        '2026-01-14T00:00:00.000Z',
      ),
      '2026-01',
    );
    expect(s.conversations).toBe(4);
    expect(s.lines).toEqual([
      { kind: 'top_off', topOffId: 'top_a', conversations: 2, unitPrice: 100, amount: 200 },
      { kind: 'top_off', topOffId: 'top_b', conversations: 2, unitPrice: 150, amount: 300 },
    ]);
    expect(s.total).toBe(500);
  });

  it('carries top-off consumption across a month boundary', () => {
    // January uses top_a (2) and 1 of top_b; February the last 2 of top_b, then top_c (no price).
    const all = convs(
      '2026-01-31T23:59:59.999Z',
      '2026-01-20T00:00:00.000Z',
      '2026-01-25T00:00:00.000Z',
      '2026-02-01T00:00:00.000Z',
      '2026-02-02T00:00:00.000Z',
      '2026-02-03T00:00:00.000Z',
    );
    const jan = campaignStatement(metered(999), topOffs, all, '2026-01');
    expect(jan.lines).toEqual([
      { kind: 'top_off', topOffId: 'top_a', conversations: 2, unitPrice: 100, amount: 200 },
      { kind: 'top_off', topOffId: 'top_b', conversations: 1, unitPrice: 150, amount: 150 },
    ]);
    expect(jan.total).toBe(350);
    const feb = campaignStatement(metered(999), topOffs, all, '2026-02');
    expect(feb.lines).toEqual([
      { kind: 'top_off', topOffId: 'top_b', conversations: 2, unitPrice: 150, amount: 300 },
      { kind: 'top_off', topOffId: 'top_c', conversations: 1, unitPrice: 0, amount: 0 },
    ]);
    expect(feb.total).toBe(300);
    expect(campaignStatement(metered(999), topOffs, all, '2026-03').total).toBe(0);
  });

  it('treats no top-off as unlimited at the campaign price, and no price as free', () => {
    const c = convs('2026-01-11T00:00:00.000Z', '2026-01-12T00:00:00.000Z');
    expect(campaignStatement(metered(70), [], c, '2026-01')).toMatchObject({
      total: 140,
      lines: [{ kind: 'unlimited', topOffId: null, conversations: 2, unitPrice: 70, amount: 140 }],
    });
    expect(campaignStatement(metered(null), [], c, '2026-01').total).toBe(0);
  });

  it('bills conversations past the last top-off at the campaign price', () => {
    const s = campaignStatement(
      metered(40),
      [topOffs[1]],
      convs('2026-01-11T00:00:00.000Z', '2026-01-12T00:00:00.000Z', '2026-01-13T00:00:00.000Z'),
      '2026-01',
    );
    expect(s.lines).toEqual([
      { kind: 'top_off', topOffId: 'top_a', conversations: 2, unitPrice: 100, amount: 200 },
      { kind: 'overage', topOffId: null, conversations: 1, unitPrice: 40, amount: 40 },
    ]);
  });

  it('refuses a malformed month', () => {
    expect(() => campaignStatement(metered(1), [], [], '2026-13')).toThrow(RangeError);
  });
});

describe('campaignStatement, fixed', () => {
  const fixed: BillableCampaign = {
    id: 'cmp_f',
    name: 'Fixed',
    budgetMode: 'fixed',
    pricePerConversation: null,
    fixedPrice: 50_000,
    launchedAt: d('2026-03-31T23:30:00.000Z'),
  };
  const c = convs('2026-03-31T23:45:00.000Z', '2026-04-01T00:10:00.000Z', '2026-04-02T00:00:00.000Z');

  it('bills the flat total in the month of launch with conversations at 0', () => {
    expect(campaignStatement(fixed, [], c, '2026-03')).toMatchObject({
      conversations: 1,
      total: 50_000,
      lines: [{ kind: 'fixed', conversations: 1, unitPrice: 0, amount: 50_000 }],
    });
    expect(campaignStatement(fixed, [], c, '2026-04')).toMatchObject({ conversations: 2, total: 0 });
  });

  it('bills nothing before launch', () => {
    expect(campaignStatement({ ...fixed, launchedAt: null }, [], [], '2026-03').total).toBe(0);
  });
});

describe('projectStatement', () => {
  it('sums campaigns and leaves out empty ones', () => {
    const a = campaignStatement(metered(10), [], convs('2026-01-11T00:00:00.000Z'), '2026-01');
    const b = campaignStatement(metered(10), [], [], '2026-01');
    const p = projectStatement('prj_1', '2026-01', [a, b]);
    expect(p.campaigns).toHaveLength(1);
    expect(p.total).toBe(10);
  });
});

describe('campaignStatement from counts', () => {
  /** The rule walked conversation by conversation, in start order: what the counts must equal. */
  function walked(
    campaign: BillableCampaign,
    topOffs: readonly BillableTopOff[],
    conversations: readonly Conversation[],
    month: string,
  ): StatementLine[] {
    const ordered = [...conversations].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
    const pots = [...topOffs].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    const lines = new Map<string, StatementLine>();
    const bill = (kind: StatementLine['kind'], topOffId: string | null, unitPrice: number) => {
      const line = lines.get(`${kind}:${topOffId}`) ?? {
        kind,
        topOffId,
        conversations: 0,
        unitPrice,
        amount: 0,
      };
      line.conversations += 1;
      line.amount += unitPrice;
      lines.set(`${kind}:${topOffId}`, line);
    };
    let pot = 0;
    let used = 0;
    for (const c of ordered) {
      while (pot < pots.length && used >= pots[pot].conversations) [pot, used] = [pot + 1, 0];
      const billed = monthOf(c.startedAt) === month;
      if (pots.length === 0) {
        if (billed) bill('unlimited', null, campaign.pricePerConversation ?? 0);
      } else if (pot < pots.length) {
        used += 1;
        if (billed) bill('top_off', pots[pot].id, pots[pot].pricePerConversation ?? 0);
      } else if (billed) bill('overage', null, campaign.pricePerConversation ?? 0);
    }
    return [...lines.values()];
  }

  it('bills exactly as walking every conversation would, across months and top-offs', () => {
    // A fixed-seed generator: the same cases on every run.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let trial = 0; trial < 300; trial++) {
      const topOffs = Array.from({ length: random(4) }, (_, i) => ({
        id: `top_${i}`,
        createdAt: d(`2026-0${1 + random(3)}-0${1 + random(9)}T00:00:00.000Z`),
        conversations: 1 + random(6),
        pricePerConversation: random(3) === 0 ? null : 10 * (1 + random(20)),
      }));
      const conversations = Array.from({ length: random(30) }, (_, i) => ({
        id: `cnv_${i}`,
        startedAt: d(`2026-0${1 + random(4)}-1${random(10)}T0${random(10)}:00:00.000Z`),
      }));
      const campaign = metered(random(4) === 0 ? null : 1 + random(99));
      for (const month of ['2026-01', '2026-02', '2026-03', '2026-04', '2026-05']) {
        const statement = campaignStatement(campaign, topOffs, conversations, month);
        expect(statement.lines).toEqual(walked(campaign, topOffs, conversations, month));
        expect(statement.total).toBe(statement.lines.reduce((t, l) => t + l.amount, 0));
      }
    }
  });
});
