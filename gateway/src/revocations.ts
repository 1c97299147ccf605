import { type ApiKeySnapshot, subjects } from '@outreach/contracts';
import { follower, type JetStreamClient, keepConsuming, type Logger, streamNames } from '@outreach/platform';
import { JSONCodec } from 'nats';

const codec = JSONCodec<ApiKeySnapshot>();

/**
 * Follows API-key snapshots from now on (an ephemeral consumer of its own: each gateway
 * instance sees every message) and reports each revoked key id. Returns a stop function.
 */
export async function watchRevocations(
  js: JetStreamClient,
  prefix: string,
  onRevoked: (keyId: string) => void,
  logger: Logger,
): Promise<() => Promise<void>> {
  // Started again after a loss, it resumes from the last snapshot it handled.
  const open = follower(js, {
    stream: streamNames(prefix).state,
    filterSubjects: subjects(prefix).apiKeyStateAll,
    from: 'new',
  });
  const { stop } = await keepConsuming(open, 'api key revocations', logger, (msg) => {
    try {
      const snapshot = codec.decode(msg.data);
      if (snapshot.revoked) onRevoked(snapshot.id);
    } catch (err) {
      logger.warn({ err, subject: msg.subject }, 'unreadable api key snapshot');
    }
    msg.ack();
  });
  return stop;
}
