import { knowledgeIndexed } from '@outreach/contracts';
import pino from 'pino';
import { activeCampaign, device } from '../../test/support/fixtures';
import { StateCache, untilReplayed } from './state.cache';

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('StateCache devices', () => {
  it('holds the latest snapshot of a device without indexing its knowledge', async () => {
    const state = new StateCache(pino({ level: 'silent' }));
    const first = device({ version: 1 });
    const second = { ...first, version: 2, knowledge: [...first.knowledge] };
    state.applyDevice(first);
    state.applyDevice(second);
    state.applyDevice(first);
    await turns(5);
    expect(state.device(first.id)).toBe(second);
    // Indexed only when a page of the device is opened (or a message needs it), not for every
    // device the process hears of.
    expect(second.knowledge.length).toBeGreaterThan(0);
    expect(knowledgeIndexed(second.knowledge)).toBe(false);
  });
});

describe('StateCache campaigns', () => {
  it('keeps a tombstone when a newer snapshot without deletedAt comes, and ignores older ones', () => {
    const state = new StateCache(pino({ level: 'silent' }));
    const draft = activeCampaign({ version: 1, launchedAt: null });
    state.applyCampaign(draft);
    state.applyCampaign({ ...draft, version: 2, deletedAt: '2026-05-10T12:00:00.000Z' });
    state.applyCampaign(draft);
    expect(state.campaign(draft.id)?.deletedAt).toBe('2026-05-10T12:00:00.000Z');
    // As a campaign service of the release before deletion would publish it, mid-rollout.
    state.applyCampaign({ ...draft, version: 3, name: 'renamed' });
    expect(state.campaign(draft.id)).toMatchObject({
      version: 3,
      name: 'renamed',
      deletedAt: '2026-05-10T12:00:00.000Z',
    });
  });
});

describe('untilReplayed', () => {
  it('waits for the replay however long it takes, saying every interval how much is left', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let finish: () => void = () => undefined;
    const replayed = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let left = 40;
    let done = false;
    const waiting = untilReplayed(
      replayed,
      { consumer: 'state.campaign.*', left: () => left },
      logger,
      30,
    ).then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    left = 7;
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines[0]).toMatchObject({ consumer: 'state.campaign.*', snapshotsLeft: 40 });
    expect(lines.at(-1)).toMatchObject({ snapshotsLeft: 7 });
    finish();
    await waiting;
    expect(done).toBe(true);
  });
});
