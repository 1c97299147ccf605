import { csvCell, statementCsv } from './billing.pages';

describe('statement CSV', () => {
  it('quotes cells and defuses spreadsheet formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell(-5)).toBe('-5');
  });

  it('writes one row per statement line with amounts in minor units', () => {
    const csv = statementCsv('2026-11', [
      {
        campaignId: 'cmp_1',
        name: 'Spring, north',
        month: '2026-11',
        budgetMode: 'metered',
        conversations: 3,
        total: 125,
        lines: [
          { kind: 'top_off', topOffId: 'top_1', conversations: 2, unitPrice: 50, amount: 100 },
          { kind: 'overage', topOffId: null, conversations: 1, unitPrice: 25, amount: 25 },
        ],
      },
    ]);
    expect(csv.split('\r\n')).toEqual([
      'month,campaign_id,campaign_name,budget_mode,line,top_off_id,conversations,unit_price_minor,amount_minor',
      '2026-11,cmp_1,"Spring, north",metered,top_off,top_1,2,50,100',
      '2026-11,cmp_1,"Spring, north",metered,overage,,1,25,25',
      '',
    ]);
  });
});
