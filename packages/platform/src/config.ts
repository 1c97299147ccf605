/** How one environment variable is read. */
export type VarSpec =
  | { type: 'string'; default?: string; required?: boolean; secret?: boolean; doc: string }
  | { type: 'url'; default?: string; required?: boolean; secret?: boolean; doc: string }
  | { type: 'int'; default?: number; min?: number; max?: number; doc: string }
  | { type: 'bool'; default?: boolean; doc: string }
  | { type: 'enum'; values: readonly string[]; default?: string; doc: string };

type ValueOf<S extends VarSpec> = S extends { type: 'int' }
  ? number
  : S extends { type: 'bool' }
    ? boolean
    : S extends { type: 'enum'; values: readonly (infer V)[] }
      ? S extends { default: string }
        ? V
        : V | undefined
      : S extends { default: string } | { required: true }
        ? string
        : string | undefined;

/** The typed configuration produced by a spec. */
export type ConfigOf<T extends Record<string, VarSpec>> = { readonly [K in keyof T]: ValueOf<T[K]> };

/** Thrown when the environment does not satisfy the spec; lists every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once against `spec`; fails naming every missing or malformed variable. */
export function loadConfig<T extends Record<string, VarSpec>>(
  spec: T,
  env: NodeJS.ProcessEnv = process.env,
): ConfigOf<T> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, s] of Object.entries(spec)) {
    const raw = env[name];
    const present = raw !== undefined && raw !== '';
    switch (s.type) {
      case 'int': {
        if (!present) {
          if (s.default === undefined) problems.push(`${name} is required (${s.doc})`);
          out[name] = s.default;
          break;
        }
        const n = Number(raw);
        if (
          !Number.isInteger(n) ||
          (s.min !== undefined && n < s.min) ||
          (s.max !== undefined && n > s.max)
        ) {
          problems.push(
            `${name} must be an integer${s.min !== undefined ? ` >= ${s.min}` : ''}${s.max !== undefined ? ` <= ${s.max}` : ''}, got "${raw}"`,
          );
        }
        out[name] = n;
        break;
      }
      case 'bool': {
        if (!present) {
          out[name] = s.default ?? false;
          break;
        }
        const value = raw.toLowerCase();
        if (!['true', 'false', '1', '0'].includes(value))
          problems.push(`${name} must be true or false, got "${raw}"`);
        out[name] = value === 'true' || value === '1';
        break;
      }
      case 'enum': {
        const v = present ? raw : s.default;
        if (v === undefined) problems.push(`${name} is required: one of ${s.values.join(', ')}`);
        else if (!s.values.includes(v))
          problems.push(`${name} must be one of ${s.values.join(', ')}, got "${v}"`);
        out[name] = v;
        break;
      }
      default: {
        const v = present ? raw : s.default;
        if (v === undefined && s.required) problems.push(`${name} is required (${s.doc})`);
        if (v !== undefined && s.type === 'url' && !URL.canParse(v)) {
          problems.push(`${name} must be a URL, got "${s.secret ? '<redacted>' : v}"`);
        }
        out[name] = v;
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<T>;
}

/** Variables every service reads: where the shared stores are and how to name things in them. */
export const COMMON_CONFIG = {
  NODE_ENV: {
    type: 'enum',
    values: ['development', 'production', 'test'],
    default: 'development',
    doc: 'runtime mode',
  },
  LOG_LEVEL: {
    type: 'enum',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    doc: 'pino log level',
  },
  // `none`, not `off`: Helm reads values as YAML 1.1, where an unquoted off is false.
  ACCESS_LOG: {
    type: 'enum',
    values: ['all', 'errors', 'none'],
    default: 'all',
    doc: 'which HTTP requests get an access line (at info): all, errors (status 400 and up) or none',
  },
  DATABASE_URL: {
    type: 'url',
    default: 'postgres://postgres@127.0.0.1:5432/outreach',
    secret: true,
    doc: 'PostgreSQL connection URL',
  },
  DATABASE_POOL_SIZE: { type: 'int', default: 10, min: 1, max: 200, doc: 'PostgreSQL pool size' },
  REDIS_URL: { type: 'url', default: 'redis://127.0.0.1:6379', secret: true, doc: 'Redis URL' },
  REDIS_PREFIX: { type: 'string', default: 'outreach:', doc: 'prefix of every Redis key' },
  REDIS_COMMAND_TIMEOUT_MS: {
    type: 'int',
    default: 1000,
    min: 50,
    max: 60_000,
    doc: 'how long a Redis command may go unanswered before its request is refused as unavailable',
  },
  NATS_URL: { type: 'string', default: 'nats://127.0.0.1:4222', doc: 'NATS server URL(s), comma separated' },
  NATS_PREFIX: {
    type: 'string',
    default: 'outreach',
    doc: 'prefix of NATS subjects, streams and durable consumers',
  },
  PUBLIC_BASE_URL: { type: 'url', default: 'http://localhost:8081', doc: 'base URL of every recipient link' },
  KNOWLEDGE_ENTRIES: {
    type: 'int',
    default: 3,
    min: 0,
    max: 50,
    doc: 'knowledge entries placed in a system prompt (the link runtime and the prompt preview agree on it)',
  },
  METRICS_PORT: { type: 'int', default: 0, min: 0, max: 65535, doc: 'Prometheus /metrics port (0 disables)' },
  SHUTDOWN_TIMEOUT_MS: { type: 'int', default: 10000, min: 100, doc: 'deadline for graceful shutdown' },
  INTERNAL_TOKEN: {
    type: 'string',
    secret: true,
    doc: 'bearer token of every gRPC call between the services, the same on each (required in production, at least 32 characters; unset elsewhere, the gRPC servers accept any caller)',
  },
  INTERNAL_TOKEN_MODE: {
    type: 'enum',
    values: ['require', 'accept-missing'],
    default: 'require',
    doc: 'what the gRPC servers do with a call carrying no INTERNAL_TOKEN: require refuses it; accept-missing lets it through (logged) for the rollout from a release without the token, and still refuses a wrong one',
  },
  INTERNAL_TOKEN_ALSO_ACCEPTED: {
    type: 'string',
    secret: true,
    doc: 'a second token the gRPC servers accept besides INTERNAL_TOKEN, never sent by the clients: only while rotating INTERNAL_TOKEN (first the next token, then the previous one); the same rules as INTERNAL_TOKEN, different from it, and never without it',
  },
} as const satisfies Record<string, VarSpec>;

/** The shortest internal token accepted in production (the chart generates 48 random characters). */
export const MIN_INTERNAL_TOKEN_LENGTH = 32;

// A bearer token goes as one metadata value after "Bearer ": printable ASCII without spaces.
const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

/** What is wrong with one internal token variable; `token` is already undefined when unset or empty. */
function internalTokenProblems(name: string, token: string | undefined, production: boolean): string[] {
  if (token === undefined) return [];
  const problems: string[] = [];
  if (production && token.length < MIN_INTERNAL_TOKEN_LENGTH)
    problems.push(`${name} must be at least ${MIN_INTERNAL_TOKEN_LENGTH} characters in production`);
  if (!TOKEN_CHARACTERS.test(token)) problems.push(`${name} must be printable ASCII without spaces`);
  return problems;
}

/** A service's internal tokens, as `internalTokensOf` validated them. */
export interface InternalTokens {
  /** INTERNAL_TOKEN: what its gRPC clients send and its gRPC server requires; undefined outside production only. */
  token: string | undefined;
  /** INTERNAL_TOKEN_ALSO_ACCEPTED: what its gRPC server accepts as well while the token is rotated. */
  alsoAccepted: string | undefined;
}

/**
 * The internal tokens (INTERNAL_TOKEN, INTERNAL_TOKEN_ALSO_ACCEPTED), checked together, every
 * problem named at once. INTERNAL_TOKEN is required in production, and there at least
 * MIN_INTERNAL_TOKEN_LENGTH characters: it is all that stands between a reachable gRPC port and
 * every project's recipients. Elsewhere it may be unset: the servers then accept any caller and
 * the clients send none. INTERNAL_TOKEN_ALSO_ACCEPTED follows the same rules when set, must differ
 * from INTERNAL_TOKEN (the same value would make a rotation a no-op that looks done), and is
 * refused without it: a server with no INTERNAL_TOKEN accepts anyone, so it would mean nothing.
 */
export function internalTokensOf(config: {
  NODE_ENV: string;
  INTERNAL_TOKEN?: string | undefined;
  INTERNAL_TOKEN_ALSO_ACCEPTED?: string | undefined;
}): InternalTokens {
  const token = config.INTERNAL_TOKEN || undefined;
  const alsoAccepted = config.INTERNAL_TOKEN_ALSO_ACCEPTED || undefined;
  const production = config.NODE_ENV === 'production';
  const problems: string[] = [];
  if (production && !token) problems.push('INTERNAL_TOKEN is required in production');
  problems.push(...internalTokenProblems('INTERNAL_TOKEN', token, production));
  if (alsoAccepted !== undefined) {
    if (!token)
      problems.push(
        'INTERNAL_TOKEN_ALSO_ACCEPTED is set without INTERNAL_TOKEN: it is the second token of a rotation, and a gRPC server without INTERNAL_TOKEN accepts any caller; set INTERNAL_TOKEN, or unset both',
      );
    problems.push(...internalTokenProblems('INTERNAL_TOKEN_ALSO_ACCEPTED', alsoAccepted, production));
    if (alsoAccepted === token)
      problems.push(
        'INTERNAL_TOKEN_ALSO_ACCEPTED must differ from INTERNAL_TOKEN: during a rotation it holds the other token (the next one, then the previous one)',
      );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { token, alsoAccepted };
}

/** How an HTTP service facing the Ingress reads client addresses (the gateway and the link runtime). */
export const PROXY_CONFIG = {
  TRUST_PROXY: {
    type: 'bool',
    default: false,
    doc: 'take the client address from X-Forwarded-For (only behind a trusted proxy)',
  },
  TRUSTED_PROXY_HOPS: {
    type: 'int',
    default: 1,
    min: 1,
    max: 10,
    doc: 'with TRUST_PROXY, how many trusted proxies append to X-Forwarded-For: the client is that many entries from its end',
  },
} as const satisfies Record<string, VarSpec>;
