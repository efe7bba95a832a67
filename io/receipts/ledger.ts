/**
 * The receipt ledger: signs a receipt, makes it durable, then publishes it as a file and in the index. It only
 * signs, journals and publishes: what a caller attaches to a record (the API's quota use) is carried in the
 * journal as an opaque value and handed back to the caller at recovery, never interpreted here.
 *
 * Durability (docs/architecture.md "Durability promises" 2) comes from the journal: `issue()` resolves only once the batch holding the
 * receipt has been fsynced. The receipt file, the DuckDB row and the observation are views written after that,
 * and `recover()` rebuilds them from the journal at start-up, so a SIGKILL at any moment loses nothing that was
 * acknowledged (promise 3). Until its file is written a receipt is served from memory.
 *
 * A receipt is serialized once (`signReceiptJson`): the signed text goes into the journal line and, as it is, into
 * the receipt file, which a worker thread writes after the answer (`receipt-file-writer.ts`).
 *
 * With a store other instances read (PostgreSQL, `DATABASE_URL`), an instance serves another's receipts from the
 * store alone, so the `committed` port makes `issue()` also wait until the receipt's row is committed there: an
 * acknowledged receipt is then both in this instance's journal and where every instance serves it. The
 * row is sent while the journal syncs, not after, so the answer waits for the slower of the two, not their sum; a
 * receipt whose journal write fails may thus be in the store unacknowledged (signed and valid, never answered).
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { HttpMethod, Observation } from '../../core/model.ts';
import { type Signer, signReceiptJson } from '../../core/receipt.ts';
import type { ReceiptRow, Store } from '../store/port.ts';
import { createReceiptBodies, type KeptBodies } from './bodies.ts';
import { createReceiptFileWriter, type ReceiptFileWriter } from './file-writer.ts';
import type { Journal } from './journal.ts';

export type IssueMeta = {
  row: Omit<ReceiptRow, 'body'>;
  observation: { urlNorm: string; method: HttpMethod; value: Observation } | null;
  /** The caller's own record of this answer (plain JSON), committed with it and handed back by `recover`. */
  attached: unknown;
};

/** Journals written before the ledger stopped knowing about quotas name the attachment `quota`. */
type JournalRecord = { v: 1; kind: 'receipt'; receipt: Record<string, unknown>; quota?: unknown } & IssueMeta;
/** An attachment without a receipt (a lookup's quota use); `kind: 'quota'` in older journals. */
type AttachmentRecord = { v: 1; kind: 'attachment' | 'quota'; attached?: unknown; quota?: unknown };

/** What `recover` replays attachments from, and where it hands them. */
export type RecoverOptions = {
  /** Attachments of records journaled on or after this UTC day (`YYYY-MM-DD`) are handed back. */
  attachedSince: string;
  onAttached: (attached: unknown) => void;
};

export type Ledger = {
  /** Signs, durably records and publishes a receipt; resolves with the signed receipt. */
  issue<T extends Record<string, unknown>>(
    unsigned: T,
    meta: IssueMeta,
  ): Promise<T & { kid: string; signature: string }>;
  /** Durably records an attachment that has no receipt; resolves once it is on disk. */
  attach(attached: unknown): Promise<void>;
  /** A receipt by id: this instance's from its bodies (memory, then the file), then the index. */
  get(id: string): Promise<Record<string, unknown> | null>;
  /** Replays the journal into files, index and observations, and hands back attachments since a day. */
  recover(options: RecoverOptions): Promise<{ records: number; reindexed: number }>;
  /** Resolves once every receipt file queued so far is written (the file writer's flush). */
  flushFiles(): Promise<void>;
  /** Writes everything published to the index and files, then moves the checkpoint past it (clean shutdown). */
  checkpoint(): Promise<void>;
};

/** Most receipts answered whose file is not written yet (memory holds them until it is). */
const MAX_UNWRITTEN = 10_000;

/** What {@link createLedger} is built over. */
export type LedgerParts = {
  signer: () => Signer;
  journal: Journal;
  store: Store;
  receiptsDir: string;
  checkpointFile: string;
  /** The bodies of this instance's receipts, which the embedded index also reads (default: over `receiptsDir`). */
  bodies?: KeptBodies;
  /** Writes the receipt files (default: a worker thread writing into `receiptsDir`). */
  files?: ReceiptFileWriter;
  /** With a shared store: resolves once the receipt's row is committed there (group commit), rejects if not. */
  committed?: (receiptId: string) => Promise<void>;
};

/** Creates the ledger over its parts. */
export function createLedger(parts: LedgerParts): Ledger {
  const ctx: LedgerContext = {
    parts,
    files: parts.files ?? createReceiptFileWriter(parts.receiptsDir),
    bodies: parts.bodies ?? createReceiptBodies(parts.receiptsDir),
    latest: null,
  };
  return {
    issue: (unsigned, meta) => issueReceipt(ctx, unsigned, meta),
    async attach(attached) {
      const record: AttachmentRecord = { v: 1, kind: 'attachment', attached };
      ctx.latest = later(ctx.latest, (await parts.journal.append(record)).cursor);
    },
    get: async (id) => (await ctx.bodies.read(id)) ?? (await parts.store.receipt(id)),
    recover: (options) => recoverJournal(ctx, options),
    checkpoint: () => checkpointLedger(ctx),
    flushFiles: () => ctx.files.flush(),
  };
}

/** The state of one ledger, shared by its steps. */
type LedgerContext = {
  readonly parts: LedgerParts;
  readonly files: ReceiptFileWriter;
  /** The bodies of the receipts issued: recent ones, and those whose file is not written yet. */
  readonly bodies: KeptBodies;
  /** The newest journal cursor this process appended or replayed. */
  latest: string | null;
};

/** Signs a receipt, waits until it is durable (and committed in a shared store), then publishes it. */
async function issueReceipt<T extends Record<string, unknown>>(
  ctx: LedgerContext,
  unsigned: T,
  meta: IssueMeta,
): Promise<T & { kid: string; signature: string }> {
  const { parts } = ctx;
  // Files lag behind the answers only so far: past this many, a new receipt waits for the writer to catch up.
  while (ctx.bodies.unwritten() >= MAX_UNWRITTEN) await ctx.files.flush();
  const { receipt, json } = signReceiptJson(unsigned, parts.signer());
  // With a shared store the row is committed there while the journal syncs; the answer waits for both.
  const shared = parts.committed ? shareRow(parts.store, receipt, json, meta, parts.committed) : null;
  const position = await parts.journal.appendJson(receiptRecordJson(json, meta));
  ctx.latest = later(ctx.latest, position.cursor);
  ctx.bodies.remember(receipt);
  publish(ctx, receipt, json, meta, shared !== null);
  if (shared) await shared();
  return receipt;
}

/** Hands a durable receipt to its views: index row and observation now (in-memory queues), file after. */
function publish(
  ctx: LedgerContext,
  receipt: Record<string, unknown>,
  json: string,
  meta: IssueMeta,
  indexed = false,
): void {
  const { store } = ctx.parts;
  if (!indexed) store.indexReceipts([{ ...meta.row, body: receipt, bodyJson: json, bodyInFile: true }]);
  if (meta.observation) {
    store.addObservation(meta.observation.urlNorm, meta.observation.method, meta.observation.value);
  }
  const id = String(receipt.id);
  ctx.bodies.hold(id, receipt);
  void ctx.files.write(id, `${json}\n`).then(() => ctx.bodies.written(id));
}

/** Indexes the receipt now and returns the wait for its commit (its failure is kept until then, not thrown). */
function shareRow(
  store: Store,
  receipt: Record<string, unknown>,
  json: string,
  meta: IssueMeta,
  committed: (id: string) => Promise<void>,
): () => Promise<void> {
  store.indexReceipts([{ ...meta.row, body: receipt, bodyJson: json }]);
  const outcome = committed(String(receipt.id)).then(
    () => null,
    (error: unknown) => ({ error }),
  );
  return async () => {
    const failed = await outcome;
    if (failed) throw failed.error;
  };
}

/** Replays the journal: attachments since the caller's day back to it, receipts past the checkpoint republished. */
async function recoverJournal(
  ctx: LedgerContext,
  options: RecoverOptions,
): Promise<{ records: number; reindexed: number }> {
  const { journal, store, checkpointFile } = ctx.parts;
  // Two things need the journal at start-up: the attachments since the caller's day, and whatever the index
  // and the receipt files may lack (everything after the checkpoint). Replay from the earlier of the two.
  const checkpoint = await readCheckpoint(checkpointFile);
  const day = await journal.cursorBeforeDay(options.attachedSince.replaceAll('-', ''));
  const since = earlier(checkpoint, day);
  let records = 0;
  let reindexed = 0;
  let last: string | null = null;
  await journal.replay(
    (value, position) => {
      last = position.cursor;
      const record = value as JournalRecord | AttachmentRecord;
      const attached = record?.attached ?? record?.quota ?? null;
      if (attached !== null) options.onAttached(attached);
      if (record?.kind !== 'receipt') return;
      records++;
      if (checkpoint === null || Number(position.cursor) > Number(checkpoint)) {
        const { receipt, v: _v, kind: _kind, quota: _quota, ...meta } = record;
        // The file gets the text an answer would have written: the signature member last.
        const { signature, ...unsigned } = receipt;
        publish(ctx, receipt, JSON.stringify({ ...unsigned, signature }), meta);
        reindexed++;
      }
    },
    since === null ? {} : { since },
  );
  await store.flush();
  await ctx.files.flush();
  if (last !== null) await writeFile(checkpointFile, JSON.stringify({ cursor: last }));
  ctx.latest = later(ctx.latest, last);
  return { records, reindexed };
}

/** Writes everything published to the index and files, then moves the checkpoint past it (clean shutdown). */
async function checkpointLedger(ctx: LedgerContext): Promise<void> {
  await ctx.files.flush();
  await ctx.files.close();
  await ctx.parts.store.flush();
  if (ctx.latest !== null) await writeFile(ctx.parts.checkpointFile, JSON.stringify({ cursor: ctx.latest }));
}

/**
 * The journal line of a receipt, around its signed text: `{"v":1,"kind":"receipt","receipt":<json>,...meta}`. The
 * receipt is spliced in as it was signed rather than serialized again.
 */
function receiptRecordJson(json: string, meta: IssueMeta): string {
  const rest = JSON.stringify(meta);
  return `{"v":1,"kind":"receipt","receipt":${json}${rest === '{}' ? '' : `,${rest.slice(1, -1)}`}}`;
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
