import type { Clock, Logger } from '@outreach/platform';
import type { Pool } from 'pg';

/**
 * What the domain modules need. The admin routes, the gRPC handlers and the dashboard
 * all call the same functions with this object.
 */
export interface CampaignDeps {
  pool: Pool;
  clock: Clock;
  logger: Logger;
  /** NATS_PREFIX: subjects of published snapshots. */
  natsPrefix: string;
  /** How many knowledge entries a system prompt carries (KNOWLEDGE_ENTRIES, as in the link runtime). */
  knowledgeEntries: number;
  /** The most projects an operator may manage and still create another (OPERATOR_PROJECT_LIMIT). */
  operatorProjectLimit: number;
  /** Called after a transaction that wrote outbox rows committed; publishes them now. */
  afterCommit: () => void;
  /** Who the changes made with these deps are recorded as made by (the project's activity). */
  actor?: string;
}
