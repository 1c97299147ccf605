import { jsonText } from './json';

describe('jsonText', () => {
  const values: unknown[] = [
    null,
    0,
    -1.5,
    'a"\u2028\\',
    true,
    [],
    {},
    [1, [2, [3, {}]], { b: null, a: 'x' }],
    { z: [{ y: 1, x: [] }], é: { '': 0 }, a: 'b' },
  ];

  it('writes what JSON.stringify writes, keys in their order or sorted', () => {
    for (const value of values) {
      expect(jsonText(value)).toBe(JSON.stringify(value));
      const sorted = jsonText(value, { sortKeys: true });
      expect(JSON.parse(sorted)).toEqual(value);
    }
    expect(jsonText({ b: 1, a: [{ d: 2, c: 3 }] }, { sortKeys: true })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
  });

  it('writes values nested deeper than JSON.stringify can', () => {
    const text = `{"a":${'['.repeat(100_000)}{"b":1,"a":2}${']'.repeat(100_000)}}`;
    const value = JSON.parse(text);
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    expect(jsonText(value)).toBe(text);
    expect(jsonText(value, { sortKeys: true })).toBe(text.replace('{"b":1,"a":2}', '{"a":2,"b":1}'));
  });
});
