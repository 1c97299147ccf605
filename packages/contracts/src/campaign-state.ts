/** Lifecycle states, in order. */
export const CAMPAIGN_STATES = ['draft', 'upcoming', 'active', 'completed'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

/** The facts a campaign's state is derived from; instants as Date or ISO text. */
export interface CampaignFacts {
  startDate: Date | string;
  endDate: Date | string;
  launchedAt: Date | string | null;
  haltedAt: Date | string | null;
}

const ms = (d: Date | string) => (d instanceof Date ? d.getTime() : Date.parse(d));

/**
 * Derives the state from facts and the clock, never from a stored flag: draft until
 * launched; then upcoming before startDate, active until endDate, completed from the
 * earlier of endDate and a halt.
 */
export function deriveCampaignState(c: CampaignFacts, now: Date): CampaignState {
  if (c.launchedAt === null) return 'draft';
  const t = now.getTime();
  const end = c.haltedAt === null ? ms(c.endDate) : Math.min(ms(c.endDate), ms(c.haltedAt));
  if (t >= end) return 'completed';
  return t < ms(c.startDate) ? 'upcoming' : 'active';
}

/** Draft and upcoming campaigns accept recipient writes through the API. */
export function isEditable(state: CampaignState): boolean {
  return state === 'draft' || state === 'upcoming';
}

/** The `timing` object of the v1 API: only the field of the current state is set. */
export interface Timing {
  state: CampaignState;
  now: string;
  startsInSeconds: number | null;
  runningForSeconds: number | null;
  endedAgoSeconds: number | null;
}

/** Computes `timing` at `now`, in whole seconds (floored). */
export function computeTiming(c: CampaignFacts, now: Date): Timing {
  const state = deriveCampaignState(c, now);
  const t = now.getTime();
  const secs = (x: number) => Math.max(0, Math.floor(x / 1000));
  const end = c.haltedAt === null ? ms(c.endDate) : Math.min(ms(c.endDate), ms(c.haltedAt));
  return {
    state,
    now: now.toISOString(),
    startsInSeconds: state === 'upcoming' ? secs(ms(c.startDate) - t) : null,
    // Running since it went live: its start, or its launch when it was launched after its start.
    runningForSeconds:
      state === 'active' ? secs(t - Math.max(ms(c.startDate), ms(c.launchedAt as Date | string))) : null,
    endedAgoSeconds: state === 'completed' ? secs(t - end) : null,
  };
}
