import { newId, newLinkToken } from './ids';

describe('ids', () => {
  it('makes prefixed ids and URL-safe tokens of at least 128 bits', () => {
    expect(newId('rcp')).toMatch(/^rcp_[0-9A-Za-z]{20}$/);
    const token = newLinkToken();
    expect(token).toMatch(/^[0-9A-Za-z]{26}$/);
    expect(26 * Math.log2(62)).toBeGreaterThan(128);
  });

  it('does not repeat', () => {
    const seen = new Set(Array.from({ length: 10000 }, () => newLinkToken()));
    expect(seen.size).toBe(10000);
  });
});
