import type { CampaignSnapshot } from '@outreach/contracts';
import { isUsableSnapshot } from './campaign-consumer';

const good: CampaignSnapshot = {
  id: 'cmp_1',
  projectId: 'prj_1',
  name: 'n',
  deviceId: 'dev_1',
  budgetMode: 'metered',
  startDate: '2026-01-01T00:00:00.000Z',
  endDate: '2026-02-01T00:00:00.000Z',
  launchedAt: null,
  haltedAt: null,
  recipientCap: null,
  pricePerConversation: null,
  fixedPrice: null,
  includedConversations: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  version: 1,
};

describe('isUsableSnapshot', () => {
  it('accepts a complete snapshot', () => {
    expect(isUsableSnapshot(good)).toBe(true);
    expect(isUsableSnapshot({ ...good, launchedAt: good.startDate, recipientCap: 10 })).toBe(true);
  });

  it.each([
    ['no id', { id: undefined }],
    ['a bad start date', { startDate: 'soon' }],
    ['a missing end date', { endDate: undefined }],
    ['a fractional version', { version: 1.5 }],
    ['a negative cap', { recipientCap: -1 }],
    ['a bad launch instant', { launchedAt: 'yesterday' }],
  ])('refuses a snapshot with %s', (_, patch) => {
    expect(isUsableSnapshot({ ...good, ...patch } as unknown as CampaignSnapshot)).toBe(false);
  });
});
