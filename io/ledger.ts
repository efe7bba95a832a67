/**
 * The receipt ledger: signs a receipt, makes it durable, then publishes it as a file and in the index.
 *
 * Durability (design.md promise 2) comes from the journal: `issue()` resolves only once the batch holding the
 * receipt has been fsynced. The receipt file, the DuckDB row, the observation and the quota use it carries are
 * views written after that, and `recover()` rebuilds all of them from the journal at start-up, so a SIGKILL at any
 * moment loses nothing that was acknowledged (promise 3).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HttpMethod, Observation } from '../core/model.ts';
import { type Quota, utcDay } from '../core/quota.ts';
import { type Signer, signReceipt } from '../core/receipt.ts';
import type { Journal } from './journal.ts';
import { readReceiptFile, writeReceiptFile } from './receipt-files.ts';
import type { ReceiptRow, Store } from './store.ts';

export type IssueMeta = {
  row: Omit<ReceiptRow, 'body'>;
  observation: { urlNorm: string; method: HttpMethod; value: Observation } | null;
  /** The quota units this answer used: committed with it, restored from it after a restart. */
  quota: { day: string; keys: Array<[bucket: string, id: string]> } | null;
};

type JournalRecord = { v: 1; kind: 'receipt'; receipt: Record<string, unknown> } & IssueMeta;
/** A free use whose answer carries no receipt (a lookup): journaled so a restart keeps the day's count. */
type QuotaRecord = { v: 1; kind: 'quota'; quota: NonNullable<IssueMeta['quota']> };

export type Ledger = {
  /** Signs, durably records and publishes a receipt; resolves with the signed receipt. */
  issue<T extends Record<string, unknown>>(
    unsigned: T,
    meta: IssueMeta,
  ): Promise<T & { kid: string; signature: string }>;
  /** Durably records a free use that has no receipt; resolves once it is on disk. */
  useQuota(quota: NonNullable<IssueMeta['quota']>): Promise<void>;
  /** A receipt by id: recent ones from memory, then the file, then the index. */
  get(id: string): Promise<Record<string, unknown> | null>;
  /** Replays the journal into files, index, observations and today's quota. */
  recover(): Promise<{ records: number; reindexed: number }>;
  /** Waits for published views (files) to be written. */
  settle(): Promise<void>;
  /** Writes everything published to the index and files, then moves the checkpoint past it (clean shutdown). */
  checkpoint(): Promise<void>;
};

const RECENT = 10_000;

/** Creates the ledger over its parts. */
export function createLedger(parts: {
  signer: () => Signer;
  journal: Journal;
  store: Store;
  quota: Quota;
  receiptsDir: string;
  checkpointFile: string;
  now: () => Date;
}): Ledger {
  const { journal, store, quota, receiptsDir } = parts;
  const recent = new Map<string, Record<string, unknown>>();
  // Receipt files are written one at a time by a single background writer: their syscalls would otherwise fill
  // libuv's thread pool ahead of the journal's write and fdatasync, which every answer waits for.
  const pendingFiles = new Map<string, Record<string, unknown>>();
  let writer: Promise<void> | null = null;
  const kick = (): void => {
    if (writer) return;
    writer = (async () => {
      for (const [id, receipt] of pendingFiles) {
        await writeReceiptFile(receiptsDir, receipt as { id: string }).catch((error: unknown) =>
          console.error('[spotcheck] [ledger] receipt file not written', error),
        );
        pendingFiles.delete(id);
      }
    })().finally(() => {
      writer = null;
      if (pendingFiles.size > 0) kick();
    });
  };

  const remember = (receipt: Record<string, unknown>) => {
    if (recent.size >= RECENT) recent.delete(recent.keys().next().value as string);
    recent.set(String(receipt.id), receipt);
  };
  const publish = (record: JournalRecord) => {
    store.indexReceipts([{ ...record.row, body: record.receipt }]);
    if (record.observation) {
      store.addObservation(record.observation.urlNorm, record.observation.method, record.observation.value);
    }
    pendingFiles.set(String(record.receipt.id), record.receipt);
    kick();
  };
  const settle = async (): Promise<void> => {
    while (writer) await writer;
  };
  /** The newest journal cursor this process appended or replayed. */
  let latest: string | null = null;

  return {
    async issue(unsigned, meta) {
      const receipt = signReceipt(unsigned, parts.signer());
      const record: JournalRecord = { v: 1, kind: 'receipt', receipt, ...meta };
      const position = await journal.append(record);
      latest = later(latest, position.cursor);
      remember(receipt);
      publish(record);
      return receipt;
    },
    async useQuota(quota) {
      const record: QuotaRecord = { v: 1, kind: 'quota', quota };
      latest = later(latest, (await journal.append(record)).cursor);
    },
    async get(id) {
      const hit = recent.get(id) ?? pendingFiles.get(id);
      if (hit) return hit;
      const file = (await readReceiptFile(receiptsDir, id)) as Record<string, unknown> | null;
      return file ?? (await store.receipt(id));
    },
    async recover() {
      // Two things need the journal at start-up: today's quota uses, and whatever the index and the receipt files
      // may lack (everything after the checkpoint). Replay from the earlier of the two, skipping older segments.
      const checkpoint = await readCheckpoint(parts.checkpointFile);
      const today = await journal.cursorBeforeDay(utcDay(parts.now()).replaceAll('-', ''));
      const since = earlier(checkpoint, today);
      let records = 0;
      let reindexed = 0;
      let last: string | null = null;
      await journal.replay(
        (value, position) => {
          last = position.cursor;
          const record = value as JournalRecord | QuotaRecord;
          // Receipts carry the quota use they paid for; lookups journal theirs alone.
          if (record?.quota)
            for (const [bucket, id] of record.quota.keys) quota.restore(record.quota.day, bucket, id);
          if (record?.kind !== 'receipt') return;
          records++;
          if (checkpoint === null || Number(position.cursor) > Number(checkpoint)) {
            publish(record);
            reindexed++;
          }
        },
        since === null ? {} : { since },
      );
      await store.flush();
      await settle();
      if (last !== null) await writeFile(parts.checkpointFile, JSON.stringify({ cursor: last }));
      latest = later(latest, last);
      return { records, reindexed };
    },
    async checkpoint() {
      await settle();
      await store.flush();
      if (latest !== null) await writeFile(parts.checkpointFile, JSON.stringify({ cursor: latest }));
    },
    settle,
  };
}

/** The larger of two journal cursors (they are sequence numbers). */
function later(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return Number(a) >= Number(b) ? a : b;
}

/** The smaller of two journal cursors; null (replay everything) when either is unknown. */
function earlier(a: string | null, b: string | null): string | null {
  if (a === null) return null;
  if (b === null) return a;
  return Number(a) <= Number(b) ? a : b;
}

async function readCheckpoint(file: string): Promise<string | null> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { cursor?: unknown };
    return typeof parsed.cursor === 'string' ? parsed.cursor : null;
  } catch {
    return null;
  }
}

/** Where the ledger keeps its checkpoint under DATA_DIR. */
export function checkpointPath(dataDir: string): string {
  return join(dataDir, 'index-checkpoint.json');
}
