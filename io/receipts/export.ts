/**
 * Receipt files written again from where the receipts are kept (`npm run receipts:export`, docs/deploy.md
 * "Receipts"): PostgreSQL's `receipts` table, which holds the receipts of every instance and of the ingested crawls,
 * or one instance's journal. For a receipts folder that was lost, or one folder to publish from several instances.
 *
 * A file gets the text its instance wrote (`signedReceiptText`), so an export beside the instances' own files never
 * changes a byte. Files already there are left alone; a new one is written to a temp name and renamed
 * (`writeReceiptText`), so a reader (the CDN's sync, a running instance) never sees half a file.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from 'postgres';
import { isReceiptId, signedReceiptText } from '../../core/receipt.ts';
import { writeReceiptText } from './files.ts';
import { readJournal } from './journal.ts';

/** Visits every receipt of a source in turn, waiting for `each` before the next. */
export type ReceiptSource = (each: (receipt: unknown) => Promise<void>) => Promise<void>;

/** What an export did: receipts read, files written, files already there, and receipts it could not write. */
export type ExportCounts = {
  receipts: number;
  written: number;
  present: number;
  /** `<id or position>: <why>` of each receipt that got no file. */
  refused: string[];
};

/** Files written at once: enough to keep the disk busy, few enough that memory does not grow with the source. */
const IN_FLIGHT = 64;
const PAGE = 1000;

/**
 * Every receipt in PostgreSQL, in id order, a page at a time (keyset paging, so a long export holds no transaction).
 * @example await exportReceipts(postgresReceipts(sql), '/srv/bucket/receipts')
 */
export function postgresReceipts(sql: Sql): ReceiptSource {
  return async (each) => {
    let after = '';
    for (;;) {
      const rows = await sql`SELECT id, body FROM receipts WHERE id > ${after} ORDER BY id LIMIT ${PAGE}`;
      for (const row of rows) await each(JSON.parse(String(row.body)));
      if (rows.length < PAGE) return;
      after = String(rows.at(-1)?.id);
    }
  };
}

/**
 * Every receipt in the journal folder `dir`, in the order it was journaled. Read-only: the instance that owns the
 * journal may be running (a batch it is still writing is not read).
 * @example await exportReceipts(journalReceipts(join(dataDir, 'journal')), join(dataDir, 'receipts'))
 */
export function journalReceipts(dir: string): ReceiptSource {
  return (each) =>
    readJournal(dir, async (record) => {
      const { kind, receipt } = (record ?? {}) as { kind?: unknown; receipt?: unknown };
      if (kind === 'receipt') await each(receipt);
    });
}

/**
 * Writes `<outDir>/<id>.json` for every receipt of `source` that has no file there yet.
 * @example const { written, present } = await exportReceipts(journalReceipts(journalDir), outDir)
 */
export async function exportReceipts(source: ReceiptSource, outDir: string): Promise<ExportCounts> {
  const counts: ExportCounts = { receipts: 0, written: 0, present: 0, refused: [] };
  let pending: Promise<void>[] = [];
  const writeOne = async (id: string, text: string) => {
    if (await exists(join(outDir, `${id}.json`))) {
      counts.present++;
      return;
    }
    try {
      await writeReceiptText(outDir, id, text);
      counts.written++;
    } catch (error) {
      counts.refused.push(`${id}: ${(error as Error).message}`);
    }
  };
  await source(async (value) => {
    counts.receipts++;
    const receipt = value as Record<string, unknown> | null;
    const id = typeof receipt === 'object' && receipt !== null ? receipt.id : undefined;
    if (!isReceiptId(id)) {
      counts.refused.push(`receipt ${counts.receipts}: no receipt id`);
      return;
    }
    let text: string;
    try {
      text = `${signedReceiptText(receipt as Record<string, unknown>)}\n`;
    } catch (error) {
      counts.refused.push(`${id}: ${(error as Error).message}`);
      return;
    }
    pending.push(writeOne(id, text));
    if (pending.length >= IN_FLIGHT) {
      await Promise.all(pending);
      pending = [];
    }
  });
  await Promise.all(pending);
  return counts;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
