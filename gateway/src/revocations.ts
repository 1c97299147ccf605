import { type ApiKeySnapshot, subjects } from '@outreach/contracts';
import {
  followFrom,
  type JetStreamClient,
  keepConsuming,
  type Logger,
  streamNames,
} from '@outreach/platform';
import { JSONCodec } from 'nats';

const codec = JSONCodec<ApiKeySnapshot>();

/**
 * Follows API-key snapshots from now on (an ordered, ephemeral consumer: each gateway
 * instance sees every message) and reports each revoked key id. Returns a stop function.
 */
export async function watchRevocations(
  js: JetStreamClient,
  prefix: string,
  onRevoked: (keyId: string) => void,
  logger: Logger,
): Promise<() => Promise<void>> {
  // Started again after a loss, it resumes from the last snapshot it handled.
  const open = async (resumeFrom?: Date) =>
    (
      await js.consumers.get(streamNames(prefix).state, {
        filterSubjects: subjects(prefix).apiKeyStateAll,
        ...followFrom(resumeFrom),
      })
    ).consume();
  const { stop } = await keepConsuming(open, 'api key revocations', logger, (msg) => {
    try {
      const snapshot = codec.decode(msg.data);
      if (snapshot.revoked) onRevoked(snapshot.id);
    } catch (err) {
      logger.warn({ err, subject: msg.subject }, 'unreadable api key snapshot');
    }
  });
  return stop;
}
