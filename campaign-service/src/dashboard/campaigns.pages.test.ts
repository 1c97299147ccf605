import { computeTiming } from '@outreach/contracts';
import { type CampaignView, computeAllowance } from '../campaigns/campaigns.service';
import { compileAdminSchemas } from '../http/admin.schemas';
import { invalid } from '../problems';
import { budgetWarning, fieldErrorsOf } from './campaigns.pages';

describe('fieldErrorsOf', () => {
  const check = compileAdminSchemas();

  it('names what is wrong with a number that may also be null, not the null alternative', () => {
    const problems = check('patch-campaign', {
      pricePerConversation: 2_000_000_000_000,
      recipientCap: 'ten',
    });
    const errors = fieldErrorsOf(invalid(problems), {
      '/pricePerConversation': 'price',
      '/recipientCap': 'recipientCap',
    });
    expect(errors.price).toBe('pricePerConversation must be <= 1000000000000.');
    // A value of neither type is told both (the validator joins an anyOf's type problems).
    expect(errors.recipientCap).toBe('recipientCap must be integer or null.');
  });
});

describe('budgetWarning', () => {
  const now = new Date('2026-05-10T12:00:00Z');
  /** A metered campaign that ran from 9 May to `endDate`, halted at `haltedAt`, `used` of `included`. */
  const metered = (
    endDate: string,
    haltedAt: string | null,
    used: number,
    included: number,
  ): CampaignView => {
    const record = {
      id: 'cmp_1',
      projectId: 'prj_1',
      name: 'Spring',
      deviceId: 'dev_1',
      budgetMode: 'metered' as const,
      startDate: '2026-05-09T00:00:00.000Z',
      endDate,
      launchedAt: '2026-05-08T00:00:00.000Z',
      haltedAt,
      recipientCap: null,
      pricePerConversation: 25,
      fixedPrice: null,
      createdAt: '2026-05-01T00:00:00.000Z',
      version: 1,
    };
    const timing = computeTiming(record, now);
    return { ...record, state: timing.state, timing, allowance: computeAllowance('metered', used, included) };
  };

  it('asks for a top-off while the campaign can still use one', () => {
    const active = metered('2026-05-20T00:00:00.000Z', null, 10, 10);
    expect(active.state).toBe('active');
    expect(budgetWarning(active).value).toContain('until you add a top-off');
    expect(budgetWarning(metered('2026-05-20T00:00:00.000Z', null, 95, 100)).value).toContain('Low budget');
  });

  it('says nothing once the campaign is completed, ended or halted: a top-off reopens no link', () => {
    const ended = metered('2026-05-10T00:00:00.000Z', null, 10, 10);
    const halted = metered('2026-05-20T00:00:00.000Z', '2026-05-10T06:00:00.000Z', 10, 10);
    const low = metered('2026-05-10T00:00:00.000Z', null, 95, 100);
    for (const c of [ended, halted, low]) {
      expect(c.state).toBe('completed');
      expect(budgetWarning(c).value).toBe('');
    }
  });
});
