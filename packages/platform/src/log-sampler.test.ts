import pino from 'pino';
import { AppError } from './errors';
import { LogSampler, logOutage } from './log-sampler';

describe('LogSampler', () => {
  it('lets one line of each kind through per interval and counts those it left out', () => {
    let now = 0;
    const sampler = new LogSampler(1000, () => now);
    expect(sampler.take('GET /a unavailable')).toBe(0);
    expect(sampler.take('GET /b unavailable')).toBe(0);
    for (let i = 0; i < 5; i++) expect(sampler.take('GET /a unavailable')).toBeUndefined();
    now = 999;
    expect(sampler.take('GET /a unavailable')).toBeUndefined();
    now = 1000;
    expect(sampler.take('GET /a unavailable')).toBe(6);
    expect(sampler.take('GET /b unavailable')).toBe(0);
    now = 5000;
    expect(sampler.take('GET /a unavailable')).toBe(0);
  });

  it('keeps a bounded number of kinds, forgetting those whose interval ended', () => {
    let now = 0;
    const sampler = new LogSampler(1000, () => now);
    for (let i = 0; i < 1000; i++) sampler.take(`kind ${i}`);
    now = 1000;
    for (let i = 1000; i < 3000; i++) expect(sampler.take(`kind ${i}`)).toBe(0);
    expect((sampler as unknown as { kinds: Map<string, unknown> }).kinds.size).toBeLessThanOrEqual(2000);
  });

  it('logs each cause of an outage on one route apart, so a new cause is not hidden behind an old one', () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const sampler = new LogSampler(10_000, () => 0);
    const failure = (cause: Error) => new AppError('unavailable', undefined, { cause });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const full = Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), {
      name: 'ReplyError',
    });
    for (let i = 0; i < 3; i++)
      logOutage(log, sampler, 'GET /a unavailable', {}, failure(refused), 'request failed');
    logOutage(log, sampler, 'GET /a unavailable', {}, failure(full), 'request failed');
    expect(lines.map((l) => (l.cause as { message: string }).message)).toEqual([
      'connect ECONNREFUSED',
      "OOM command not allowed when used memory > 'maxmemory'.",
    ]);
  });
});
