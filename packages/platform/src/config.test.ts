import { ConfigError, loadConfig } from './config';

const spec = {
  PORT: { type: 'int', default: 8080, min: 0, max: 65535, doc: 'port' },
  MODE: { type: 'enum', values: ['a', 'b'], default: 'a', doc: 'mode' },
  SECRET: { type: 'string', required: true, secret: true, doc: 'a secret' },
} as const;

describe('loadConfig', () => {
  it('applies defaults and parses types', () => {
    expect(loadConfig(spec, { SECRET: 's', PORT: '0' })).toEqual({ PORT: 0, MODE: 'a', SECRET: 's' });
  });

  it('names every bad variable at once', () => {
    try {
      loadConfig(spec, { PORT: 'x', MODE: 'c' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/MODE/);
      expect(problems).toMatch(/SECRET is required/);
    }
  });

  it('reads a boolean in any case as it validates it', () => {
    const flags = { ON: { type: 'bool', default: false, doc: 'a flag' } } as const;
    for (const raw of ['true', 'True', 'TRUE', '1'])
      expect(loadConfig(flags, { ON: raw })).toEqual({ ON: true });
    for (const raw of ['false', 'False', 'FALSE', '0'])
      expect(loadConfig(flags, { ON: raw })).toEqual({ ON: false });
    expect(() => loadConfig(flags, { ON: 'yes' })).toThrow(ConfigError);
  });
});
