/**
 * The bodies of the receipts this instance issued: the port both the ledger (which keeps and writes them) and the
 * embedded index (which holds no copy of them, `io/store/duckdb.ts`) depend on. Created before both, so neither
 * needs the other to exist first.
 *
 * A body is served from memory while it is recent or its file is not written yet (the file writer works after
 * the answer, `file-writer.ts`), then from its file (`files.ts`).
 */
import { readReceiptFile } from './files.ts';

/** Reads a receipt this instance issued; what the embedded index asks for a body it does not hold. */
export type ReceiptBodies = {
  /** The receipt `id` this instance issued, from memory, then its file; null when it has neither. */
  read(id: string): Promise<Record<string, unknown> | null>;
};

/** {@link ReceiptBodies} with the ledger's side: what it keeps in memory and until when. */
export type KeptBodies = ReceiptBodies & {
  /** Keeps a receipt just issued among the recent ones. */
  remember(receipt: Record<string, unknown>): void;
  /** Holds a receipt in memory until {@link KeptBodies.written} says its file is written. */
  hold(id: string, receipt: Record<string, unknown>): void;
  /** The receipt's file is written: it is read from there from now on (unless still recent). */
  written(id: string): void;
  /** How many receipts wait for their file. */
  unwritten(): number;
};

/** How many of the newest receipts stay in memory after their file is written. */
const RECENT = 10_000;

/** The bodies of the receipts whose files go to `receiptsDir`. */
export function createReceiptBodies(receiptsDir: string): KeptBodies {
  /** The newest receipts issued, by id (at most {@link RECENT}). */
  const recent = new Map<string, Record<string, unknown>>();
  /** Receipts whose file is not written yet, by id; served from here until it is. */
  const unwritten = new Map<string, Record<string, unknown>>();
  return {
    async read(id) {
      const hit = recent.get(id) ?? unwritten.get(id);
      if (hit) return hit;
      return (await readReceiptFile(receiptsDir, id)) as Record<string, unknown> | null;
    },
    remember(receipt) {
      if (recent.size >= RECENT) recent.delete(recent.keys().next().value as string);
      recent.set(String(receipt.id), receipt);
    },
    hold: (id, receipt) => unwritten.set(id, receipt),
    written: (id) => unwritten.delete(id),
    unwritten: () => unwritten.size,
  };
}
