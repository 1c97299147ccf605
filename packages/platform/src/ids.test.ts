import { isIdOf, newId, newLinkToken, randomBase62 } from './ids';

describe('ids', () => {
  it('makes prefixed ids and URL-safe tokens of at least 128 bits', () => {
    expect(newId('rcp')).toMatch(/^rcp_[0-9A-Za-z]{20}$/);
    const token = newLinkToken();
    expect(token).toMatch(/^[0-9A-Za-z]{26}$/);
    expect(26 * Math.log2(62)).toBeGreaterThan(128);
  });

  it('tells the ids newId makes from any other text', () => {
    const id = newId('cnv');
    expect(isIdOf('cnv', id)).toBe(true);
    expect(isIdOf('rcp', id)).toBe(false);
    expect(isIdOf('cnv', `${id}:history`)).toBe(false);
    expect(isIdOf('cnv', id.slice(0, -1))).toBe(false);
    expect(isIdOf('cnv', `${id.slice(0, -1)}-`)).toBe(false);
    expect(isIdOf('cnv', `${id}\n`)).toBe(false);
    expect(isIdOf('cnv', '')).toBe(false);
  });

  it('does not repeat', () => {
    const seen = new Set(Array.from({ length: 10000 }, () => newLinkToken()));
    expect(seen.size).toBe(10000);
  });
});

describe('randomBase62', () => {
  it('gives every length asked, across block refills, with every character about equally often', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) {
      const text = randomBase62(1 + (i % 40));
      expect(text).toHaveLength(1 + (i % 40));
      for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    // 41,000 characters: about 661 each; a biased or stuck source lands far outside.
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(450);
    for (const n of counts.values()) expect(n).toBeLessThan(900);
  });

  it('refuses lengths its scratch space cannot hold rather than returning less', () => {
    expect(randomBase62(240)).toHaveLength(240);
    expect(() => randomBase62(241)).toThrow(RangeError);
  });
});
