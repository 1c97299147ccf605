import { pendingSeconds } from './start-once';

describe('pendingSeconds', () => {
  it('holds a key a minute with the default timeouts', () => {
    expect(pendingSeconds(5000, 250, 5000)).toBe(60);
  });

  it('outlasts a write and a fence each at the longest statement timeout', () => {
    // Two statements of 60 s, each with its client's read timeout (61 s): over two minutes.
    expect(pendingSeconds(60_000, 250, 5000)).toBeGreaterThan(2 * 61 + 10);
  });
});
