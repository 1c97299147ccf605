import type { DeviceSnapshot, KnowledgeEntry } from '@outreach/contracts';
import pino from 'pino';
import { device } from '../../test/support/fixtures';
import { StateCache } from './state.cache';

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('StateCache device knowledge', () => {
  it('logs knowledge it cannot index instead of ending the process, and holds the device all the same', async () => {
    const lines: { msg?: string; deviceId?: string }[] = [];
    const state = new StateCache(
      pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l)) }),
    );
    // A snapshot no schema checked on its way: an entry of its knowledge is not an entry.
    const bad = device({ knowledge: [null] as unknown as KnowledgeEntry[] });
    state.applyDevice(bad);
    await turns(3);
    expect(state.device(bad.id)).toBe(bad);
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'indexing device knowledge failed', deviceId: bad.id }),
    ]);
    // The queue goes on with the next device.
    const good = device();
    state.applyDevice(good);
    await turns(3);
    expect(lines).toHaveLength(1);
  });

  it('skips the knowledge of a snapshot replaced before its turn came', async () => {
    const state = new StateCache(pino({ level: 'silent' }));
    const indexed: DeviceSnapshot[] = [];
    const first = device({ version: 1 });
    // A getter on the knowledge tells whether it was read to be indexed.
    const watched = (d: DeviceSnapshot) =>
      Object.defineProperty({ ...d }, 'knowledge', {
        get: () => {
          indexed.push(d);
          return d.knowledge;
        },
      }) as DeviceSnapshot;
    state.applyDevice(watched(first));
    state.applyDevice(watched({ ...first, version: 2 }));
    await turns(5);
    expect(indexed.map((d) => d.version)).toEqual([2]);
  });
});
