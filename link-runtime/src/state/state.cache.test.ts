import { knowledgeIndexed } from '@outreach/contracts';
import pino from 'pino';
import { device } from '../../test/support/fixtures';
import { StateCache } from './state.cache';

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
