/**
 * The ledger over the PostgreSQL store: a receipt is acknowledged only once its row is committed
 * where every instance reads it, so another pool (another instance) finds it the moment `issue()` resolves, and a
 * receipt the database refuses is never acknowledged, though this instance's journal keeps it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createJournal } from '../../../io/receipts/journal.ts';
import { createLedger, type IssueMeta } from '../../../io/receipts/ledger.ts';
import { connectPostgres, postgresStore } from '../../../io/store/postgres.ts';
import { checkRow } from '../../fixtures/check-row.ts';
import { postgresMissing, usePostgres } from '../../helpers/postgres.ts';

const signer = { kid: 'k', sign: () => new Uint8Array(64) };

const metaOf = (id: string, url: string): IssueMeta => {
  const { body: _, ...row } = checkRow(id, url, 'skip', '2026-11-24T10:00:00.000Z');
  return { row, observation: null, attached: null };
};

describe.skipIf(postgresMissing !== null)('ledger over PostgreSQL', () => {
  const pg = usePostgres();

  it('acknowledges a receipt once committed: another instance reads it at once; a refused one is not acknowledged', async () => {
    const url = await pg.createDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'spotcheck-pg-ledger-'));
    const sql = await connectPostgres(url);
    const other = postgres(url, { max: 1, onnotice: () => {} });
    const store = postgresStore(sql, { endPool: true });
    const journal = await createJournal({ dir: join(dir, 'journal'), fsync: false });
    const ledger = createLedger({
      signer: () => signer,
      journal,
      store,
      receiptsDir: join(dir, 'receipts'),
      checkpointFile: join(dir, 'checkpoint.json'),
      committed: (id) => store.committed(id),
    });
    try {
      const letter = (n: number) => String.fromCharCode(97 + (n % 26));
      const ids = Array.from({ length: 40 }, (_, i) => `sc-${'b'.repeat(23)}${letter(i / 26)}${letter(i)}a`);
      // Concurrent issues share group commits; each resolves only after its own row is in.
      await Promise.all(
        ids.map(async (id) => {
          await ledger.issue({ id }, metaOf(id, `https://seller.example/${id}`));
          const [row] = await other`SELECT id FROM receipts WHERE id = ${id}`;
          expect(row?.id).toBe(id);
        }),
      );
      // A NUL character is valid JSON and journals fine, but PostgreSQL text cannot hold it.
      const refused = 'sc-zzzzzzzzzzzzzzzzzzzzzzzzza';
      await expect(
        ledger.issue({ id: refused }, metaOf(refused, 'https://seller.example/\u0000')),
      ).rejects.toThrow(/not committed in PostgreSQL/);
      expect(await other`SELECT id FROM receipts WHERE id = ${refused}`).toHaveLength(0);
    } finally {
      await ledger.checkpoint(); // the receipt files are written by a worker after the answers
      await journal.close();
      await store.close();
      await other.end();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
