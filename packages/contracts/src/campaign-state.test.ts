import { computeTiming, deriveCampaignState, isEditable } from './campaign-state';

const facts = {
  startDate: '2026-01-10T00:00:00.000Z',
  endDate: '2026-01-20T00:00:00.000Z',
  launchedAt: null as string | null,
  haltedAt: null as string | null,
};
const at = (iso: string) => new Date(iso);

describe('deriveCampaignState', () => {
  it('is draft until launched, whatever the clock says', () => {
    expect(deriveCampaignState(facts, at('2026-01-15T00:00:00Z'))).toBe('draft');
  });

  it('moves upcoming -> active -> completed exactly at the start and end instants', () => {
    const launched = { ...facts, launchedAt: '2026-01-01T00:00:00Z' };
    expect(deriveCampaignState(launched, at('2026-01-09T23:59:59.999Z'))).toBe('upcoming');
    expect(deriveCampaignState(launched, at('2026-01-10T00:00:00.000Z'))).toBe('active');
    expect(deriveCampaignState(launched, at('2026-01-19T23:59:59.999Z'))).toBe('active');
    expect(deriveCampaignState(launched, at('2026-01-20T00:00:00.000Z'))).toBe('completed');
  });

  it('counts a halt as the end', () => {
    const halted = { ...facts, launchedAt: '2026-01-01T00:00:00Z', haltedAt: '2026-01-12T00:00:00Z' };
    expect(deriveCampaignState(halted, at('2026-01-12T00:00:00Z'))).toBe('completed');
    expect(computeTiming(halted, at('2026-01-12T00:01:30Z')).endedAgoSeconds).toBe(90);
  });

  it('only draft and upcoming are editable', () => {
    expect(['draft', 'upcoming', 'active', 'completed'].map((s) => isEditable(s as never))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('computeTiming', () => {
  const launched = { ...facts, launchedAt: '2026-01-01T00:00:00Z' };

  it('populates only the field of the current state, in whole seconds', () => {
    expect(computeTiming(launched, at('2026-01-09T23:58:00.500Z'))).toEqual({
      state: 'upcoming',
      now: '2026-01-09T23:58:00.500Z',
      startsInSeconds: 119,
      runningForSeconds: null,
      endedAgoSeconds: null,
    });
    expect(computeTiming(launched, at('2026-01-10T00:00:42Z'))).toMatchObject({
      state: 'active',
      startsInSeconds: null,
      runningForSeconds: 42,
      endedAgoSeconds: null,
    });
    // Launched after its start: it has been running since the launch, not since the start.
    const late = { ...facts, launchedAt: '2026-01-10T00:00:30Z' };
    expect(computeTiming(late, at('2026-01-10T00:00:42Z'))).toMatchObject({
      state: 'active',
      runningForSeconds: 12,
    });
    expect(computeTiming(facts, at('2026-01-10T00:00:42Z'))).toMatchObject({
      state: 'draft',
      startsInSeconds: null,
      runningForSeconds: null,
      endedAgoSeconds: null,
    });
  });
});
