import { LIMITS } from '@outreach/contracts';
import {
  COMMON_CONFIG,
  type ConfigOf,
  GRPC_TLS_CLIENT_CONFIG,
  NATS_STREAM_CONFIG,
  PROXY_CONFIG,
  type VarSpec,
} from '@outreach/platform';

// A conversation inside the longest rolling window a recipient may have is still listed when
// its window counter is rebuilt; only older ones may be folded into counts.
const MIN_ROLLUP_DAYS = Math.ceil(LIMITS.maxWindowSeconds / 86_400) + 1;

/** Every environment variable the link runtime reads. */
export const CONFIG_SPEC = {
  ...COMMON_CONFIG,
  ...NATS_STREAM_CONFIG,
  ...GRPC_TLS_CLIENT_CONFIG,
  HOST: { type: 'string', default: '0.0.0.0', doc: 'address to listen on' },
  LINK_PORT: { type: 'int', default: 8081, min: 0, max: 65535, doc: 'HTTP port of the link pages' },
  RECIPIENT_SERVICE_ADDR: {
    type: 'string',
    default: '127.0.0.1:50051',
    doc: 'host:port of the recipient-service gRPC server',
  },
  ...PROXY_CONFIG,
  ASSISTANT_BASE_URL: {
    type: 'url',
    doc: 'base URL of an OpenAI-compatible API (…/v1); unset = offline assistant',
  },
  ASSISTANT_API_KEY: { type: 'string', secret: true, doc: 'bearer key of the assistant API' },
  ASSISTANT_MODEL: { type: 'string', default: 'gpt-4o-mini', doc: 'model name sent to the assistant API' },
  ASSISTANT_TIMEOUT_MS: {
    type: 'int',
    default: 30000,
    min: 100,
    doc: 'deadline of one assistant reply, streamed or not, from the request to its last token',
  },
  CONVERSATION_TTL_SECONDS: {
    type: 'int',
    default: 86400,
    min: 60,
    doc: 'how long an idle conversation and its history are kept',
  },
  MESSAGE_MAX_CHARS: { type: 'int', default: 4000, min: 1, doc: 'longest customer message accepted' },
  MESSAGES_PER_MINUTE: {
    type: 'int',
    default: 20,
    min: 1,
    doc: 'messages one conversation may send per minute',
  },
  UNKNOWN_LINKS_PER_MINUTE: {
    type: 'int',
    default: 60,
    min: 1,
    doc: 'link tokens that exist nowhere one client address may try per minute before it is refused (429)',
  },
  UNKNOWN_CONVERSATIONS_PER_MINUTE: {
    type: 'int',
    default: 30,
    min: 1,
    doc: 'conversation ids that exist nowhere one link may ask for per minute before it is refused (429)',
  },
  HISTORY_MAX_MESSAGES: {
    type: 'int',
    default: 40,
    min: 2,
    doc: 'most recent messages of a conversation sent to the model',
  },
  RECIPIENT_CACHE_TTL_SECONDS: {
    type: 'int',
    default: 300,
    min: 1,
    doc: 'safety-net lifetime of a cached recipient (changes arrive as events first)',
  },
  RECIPIENT_CACHE_MAX_MB: {
    type: 'int',
    default: 64,
    min: 1,
    doc: 'memory the cached recipients may take (estimated); the least recently opened links go first',
  },
  GROUP_COMMIT_MS: {
    type: 'int',
    // 0: the starts judged by one admission script run reach the write in one turn already;
    // a timer would only add its delay to every start that finds no write in progress.
    default: 0,
    min: 0,
    max: 1000,
    doc: 'how long admissions wait to be written together in one INSERT (0: those of one event-loop turn)',
  },
  DB_STATEMENT_TIMEOUT_MS: {
    type: 'int',
    default: 5000,
    min: 100,
    max: 60000,
    doc: 'longest a PostgreSQL statement may run; a start whose durable write takes longer is refused as unavailable (retryable)',
  },
  USAGE_REPUBLISH_MS: {
    type: 'int',
    default: 5000,
    min: 50,
    max: 600000,
    doc: 'how often usage events JetStream has not confirmed are republished (those older than this)',
  },
  USAGE_REPLAY_HOURS: {
    type: 'int',
    default: 24,
    min: 1,
    // The events stream keeps an event 7 days: a batch is never needed longer than that.
    max: 168,
    doc: 'how long a written batch of conversations is kept after JetStream confirmed its usage event, to publish it again should JetStream lose the events stream',
  },
  CONVERSATION_ROLLUP_ENABLED: {
    type: 'bool',
    // Off until every replica runs a version that reads the rolled-up counts (see operations.md):
    // an older replica rebuilding counters would miss the folded conversations and refund them.
    default: false,
    doc: 'fold conversations older than CONVERSATION_ROLLUP_AFTER_DAYS into per-recipient and per-campaign counts (hourly)',
  },
  CONVERSATION_RECORD_AT_START: {
    type: 'bool',
    // On until every replica runs a version that reads a conversation from PostgreSQL when Redis
    // lacks it (see operations.md): an older replica would answer that conversation's messages 404.
    default: true,
    doc: "write a conversation's Redis record when it starts (off: at its first message, from PostgreSQL)",
  },
  CONVERSATION_ROLLUP_AFTER_DAYS: {
    type: 'int',
    default: 400,
    min: MIN_ROLLUP_DAYS,
    max: 3650,
    doc: 'age after which a conversation is folded into counts (longer than the longest rolling window)',
  },
  USAGE_PUBLISH_MS: {
    type: 'int',
    // Usage must show in the API within a second; the consumers add up to 50 ms of their own.
    default: 50,
    min: 0,
    max: 500,
    doc: 'least time between usage events: written admissions wait up to this long to be announced together in one (0: those of one event-loop turn)',
  },
  COUNTER_REBUILD_GRACE_MS: {
    type: 'int',
    default: 250,
    min: 0,
    max: 10000,
    doc: 'after Redis lost the usage counters, how long rebuilds wait for admissions other replicas are still writing',
  },
} as const satisfies Record<string, VarSpec>;

/** The link runtime's typed configuration. */
export type LinkConfig = ConfigOf<typeof CONFIG_SPEC>;
