import {
  COMMON_CONFIG,
  ConfigError,
  internalTokensOf,
  loadConfig,
  MIN_INTERNAL_TOKEN_LENGTH,
} from './config';

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

describe('internalTokensOf', () => {
  const TOKEN = 'internal-token-of-at-least-32-characters';
  const NEXT = 'next-internal-token-of-at-least-32-chars';
  /** The problems a ConfigError names, or [] when the tokens are taken. */
  const problemsOf = (config: Parameters<typeof internalTokensOf>[0]) => {
    try {
      internalTokensOf(config);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
  };

  it('requires INTERNAL_TOKEN in production, at least 32 characters there, and takes none elsewhere', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual(['INTERNAL_TOKEN is required in production']);
    expect(
      problemsOf({ NODE_ENV: 'production', INTERNAL_TOKEN: 'x'.repeat(MIN_INTERNAL_TOKEN_LENGTH - 1) }),
    ).toEqual([`INTERNAL_TOKEN must be at least ${MIN_INTERNAL_TOKEN_LENGTH} characters in production`]);
    expect(internalTokensOf({ NODE_ENV: 'production', INTERNAL_TOKEN: TOKEN })).toEqual({
      token: TOKEN,
      alsoAccepted: undefined,
    });
    expect(internalTokensOf({ NODE_ENV: 'development', INTERNAL_TOKEN: '' }).token).toBeUndefined();
    expect(internalTokensOf({ NODE_ENV: 'test', INTERNAL_TOKEN: 'short' }).token).toBe('short');
    // It goes as one metadata value after "Bearer ".
    expect(problemsOf({ NODE_ENV: 'test', INTERNAL_TOKEN: 'with space' })).toEqual([
      'INTERNAL_TOKEN must be printable ASCII without spaces',
    ]);
  });

  it('reads INTERNAL_TOKEN_ALSO_ACCEPTED, a secret of the common config, as the second token of a rotation', () => {
    const config = loadConfig(COMMON_CONFIG, {
      NODE_ENV: 'production',
      INTERNAL_TOKEN: TOKEN,
      INTERNAL_TOKEN_ALSO_ACCEPTED: NEXT,
    });
    expect(internalTokensOf(config)).toEqual({ token: TOKEN, alsoAccepted: NEXT });
    expect(COMMON_CONFIG.INTERNAL_TOKEN_ALSO_ACCEPTED).toMatchObject({ type: 'string', secret: true });
    // Unset or empty, as the chart leaves it between rotations: no second token.
    for (const unset of [undefined, ''])
      expect(
        internalTokensOf({
          NODE_ENV: 'production',
          INTERNAL_TOKEN: TOKEN,
          INTERNAL_TOKEN_ALSO_ACCEPTED: unset,
        }).alsoAccepted,
      ).toBeUndefined();
  });

  it('holds INTERNAL_TOKEN_ALSO_ACCEPTED to the rules of INTERNAL_TOKEN', () => {
    const production = { NODE_ENV: 'production', INTERNAL_TOKEN: TOKEN };
    expect(
      problemsOf({ ...production, INTERNAL_TOKEN_ALSO_ACCEPTED: 'x'.repeat(MIN_INTERNAL_TOKEN_LENGTH - 1) }),
    ).toEqual([
      `INTERNAL_TOKEN_ALSO_ACCEPTED must be at least ${MIN_INTERNAL_TOKEN_LENGTH} characters in production`,
    ]);
    expect(problemsOf({ ...production, INTERNAL_TOKEN_ALSO_ACCEPTED: `${NEXT} x` })).toEqual([
      'INTERNAL_TOKEN_ALSO_ACCEPTED must be printable ASCII without spaces',
    ]);
    // Outside production a short one is taken, as a short INTERNAL_TOKEN is.
    expect(
      internalTokensOf({ NODE_ENV: 'test', INTERNAL_TOKEN: 'short', INTERNAL_TOKEN_ALSO_ACCEPTED: 'other' }),
    ).toEqual({ token: 'short', alsoAccepted: 'other' });
  });

  it('refuses INTERNAL_TOKEN_ALSO_ACCEPTED equal to INTERNAL_TOKEN, or without it, in any environment', () => {
    for (const NODE_ENV of ['production', 'development', 'test']) {
      expect(problemsOf({ NODE_ENV, INTERNAL_TOKEN: TOKEN, INTERNAL_TOKEN_ALSO_ACCEPTED: TOKEN })).toEqual([
        expect.stringContaining('INTERNAL_TOKEN_ALSO_ACCEPTED must differ from INTERNAL_TOKEN'),
      ]);
      const alone = problemsOf({ NODE_ENV, INTERNAL_TOKEN: '', INTERNAL_TOKEN_ALSO_ACCEPTED: NEXT });
      expect(alone).toContainEqual(
        expect.stringContaining('INTERNAL_TOKEN_ALSO_ACCEPTED is set without INTERNAL_TOKEN'),
      );
    }
  });

  it('names every problem of both tokens at once', () => {
    expect(
      problemsOf({ NODE_ENV: 'production', INTERNAL_TOKEN: 'short', INTERNAL_TOKEN_ALSO_ACCEPTED: 'short' }),
    ).toEqual([
      'INTERNAL_TOKEN must be at least 32 characters in production',
      'INTERNAL_TOKEN_ALSO_ACCEPTED must be at least 32 characters in production',
      expect.stringContaining('INTERNAL_TOKEN_ALSO_ACCEPTED must differ from INTERNAL_TOKEN'),
    ]);
    expect(problemsOf({ NODE_ENV: 'production', INTERNAL_TOKEN_ALSO_ACCEPTED: NEXT })).toEqual([
      'INTERNAL_TOKEN is required in production',
      expect.stringContaining('INTERNAL_TOKEN_ALSO_ACCEPTED is set without INTERNAL_TOKEN'),
    ]);
  });
});
