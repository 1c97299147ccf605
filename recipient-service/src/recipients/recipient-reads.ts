import { batchPerTurn } from '@outreach/platform';
import type { Pool } from 'pg';
import { findRecipient, findRecipientsByIds, type RecipientRow } from './recipients.repository';

/** Most ids one coalesced read asks for. */
export const MAX_BATCH = 100;

/**
 * Single-recipient reads that arrive together (same turn of the event loop) share one
 * query: under load each read otherwise pays its own round trip and socket write to
 * PostgreSQL. A lone read still uses the single-row statement. Every read is issued after
 * its request arrived, so it sees every write committed before that.
 */
export function coalescedRecipientReads(
  pool: Pool,
): (projectId: string, id: string) => Promise<RecipientRow | null> {
  const read = batchPerTurn(
    async (batch: { projectId: string; id: string }[]): Promise<(RecipientRow | null)[]> => {
      if (batch.length === 1) return [await findRecipient(pool, batch[0].projectId, batch[0].id)];
      const rows = await findRecipientsByIds(pool, [...new Set(batch.map((p) => p.id))]);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return batch.map((p) => {
        const row = byId.get(p.id);
        // The id alone is the key; the project must match too, as in the single-row read.
        return row && row.project_id === p.projectId ? row : null;
      });
    },
    { maxBatch: MAX_BATCH },
  );
  return (projectId, id) => read({ projectId, id });
}
