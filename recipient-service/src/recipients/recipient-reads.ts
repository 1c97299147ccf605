import type { Pool } from 'pg';
import { findRecipient, findRecipientsByIds, type RecipientRow } from './recipients.repository';

/** Most ids one coalesced read asks for. */
export const MAX_BATCH = 100;

interface Pending {
  projectId: string;
  id: string;
  resolve: (row: RecipientRow | null) => void;
  reject: (err: unknown) => void;
}

/**
 * Single-recipient reads that arrive together (same turn of the event loop) share one
 * query: under load each read otherwise pays its own round trip and socket write to
 * PostgreSQL. A lone read still uses the single-row statement. Every read is issued after
 * its request arrived, so it sees every write committed before that.
 */
export function coalescedRecipientReads(
  pool: Pool,
): (projectId: string, id: string) => Promise<RecipientRow | null> {
  let queue: Pending[] = [];
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const batch = queue;
    queue = [];
    for (let i = 0; i < batch.length; i += MAX_BATCH) void run(batch.slice(i, i + MAX_BATCH));
  };

  const run = async (batch: Pending[]) => {
    if (batch.length === 1) {
      const [one] = batch;
      try {
        one.resolve(await findRecipient(pool, one.projectId, one.id));
      } catch (err) {
        one.reject(err);
      }
      return;
    }
    try {
      const rows = await findRecipientsByIds(pool, [...new Set(batch.map((p) => p.id))]);
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const p of batch) {
        const row = byId.get(p.id);
        // The id alone is the key; the project must match too, as in the single-row read.
        p.resolve(row && row.project_id === p.projectId ? row : null);
      }
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };

  return (projectId, id) =>
    new Promise((resolve, reject) => {
      queue.push({ projectId, id, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
