/**
 * Receipt files are written after the answer: a receipt is acknowledged once its journal line is
 * durable, served from memory until its file exists, and a process that dies between the fdatasync and the file
 * write leaves nothing lost: the next start replays the journal into the missing file and index row.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { signingInput, signReceipt } from '../../../core/receipt.ts';
import { createReceiptBodies } from '../../../io/receipts/bodies.ts';
import type { ReceiptFileWriter } from '../../../io/receipts/file-writer.ts';
import { createJournal } from '../../../io/receipts/journal.ts';
import { createLedger } from '../../../io/receipts/ledger.ts';
import { openDuckDbStore } from '../../../io/store/duckdb.ts';
import { createMemoryStore } from '../../../io/store/memory.ts';
import { checkRow } from '../../fixtures/check-row.ts';

const NOW = new Date('2026-11-24T04:00:00.000Z');
const signer = { kid: 'k1', sign: (bytes: Uint8Array) => new Uint8Array(64).fill(bytes.length % 251) };
const ID = 'sc-bbbbbbbbbbbbbbbbbbbbbbbbba';
const { body: _body, ...row } = checkRow(ID, 'https://x.example/', 'pay', NOW.toISOString());
/** The form the receipt was requested in: the only one whose receipts are the URL's public state. */
const X_FORM = { url: 'https://x.example/', method: 'GET' } as const;
const unsigned = { id: ID, issued_at: NOW.toISOString(), verdict: 'pay', note: 'é ünïcode \u2028', n: 1.5 };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-ledger-files-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A writer that never gets to write: the process dies before the worker runs. */
function dyingWriter(): ReceiptFileWriter & { queued: string[] } {
  const queued: string[] = [];
  return {
    queued,
    write: (id) => {
      queued.push(id);
      return new Promise(() => {});
    },
    flush: () => (queued.length === 0 ? Promise.resolve() : new Promise(() => {})),
    close: () => new Promise(() => {}),
  };
}

async function open(files?: ReceiptFileWriter) {
  const journal = await createJournal({ dir: join(dir, 'journal'), now: () => NOW });
  const store = createMemoryStore();
  const ledger = createLedger({
    signer: () => signer,
    journal,
    store,
    receiptsDir: join(dir, 'receipts'),
    checkpointFile: join(dir, 'checkpoint.json'),
    ...(files ? { files } : {}),
  });
  await ledger.recover({ attachedSince: '2026-11-24', onAttached: () => {} });
  return { journal, store, ledger };
}

describe('receipt files after the answer', () => {
  it('serves an acknowledged receipt before its file exists, and a restart after a kill writes the file', async () => {
    const writer = dyingWriter();
    const first = await open(writer);
    const issued = await first.ledger.issue(unsigned, { row, observation: null, attached: null });
    // The signature covers the same RFC 8785 bytes as the one-object path.
    expect(issued).toEqual(signReceipt(unsigned, signer));
    // The ledger hands the file to its writer once the receipt is durable; the writer batches it with its turn.
    await vi.waitFor(() => expect(writer.queued).toEqual([ID]), { timeout: 20_000 });
    expect(existsSync(join(dir, 'receipts', `${ID}.json`))).toBe(false);
    expect(await first.ledger.get(ID)).toEqual(issued);
    // SIGKILL here: no checkpoint, no file. Only the journal's lock is released so the same process can reopen it.
    await first.journal.close();

    const second = await open();
    const text = await readFile(join(dir, 'receipts', `${ID}.json`), 'utf8');
    expect(JSON.parse(text)).toEqual(issued);
    expect(signingInput(JSON.parse(text))).toEqual(signingInput(issued));
    expect(await second.store.receipt(ID)).toEqual(issued);
    expect(await second.ledger.get(ID)).toEqual(issued);
    await second.ledger.checkpoint();
    await second.journal.close();
  });

  it('writes the file as the signed text: the signing input with the signature member last', async () => {
    const { ledger, journal } = await open();
    const issued = await ledger.issue(unsigned, { row, observation: null, attached: null });
    await ledger.checkpoint();
    const text = await readFile(join(dir, 'receipts', `${ID}.json`), 'utf8');
    const input = new TextDecoder().decode(signingInput(issued));
    expect(text).toBe(`${input.slice(0, -1)},"signature":"${issued.signature}"}\n`);
    await journal.close();
  });
});

describe("the embedded index and the ledger's files", () => {
  const bodiesRead: string[] = [];
  /** The service's wiring: the DuckDB index and the ledger over one port of receipt bodies, made before both. */
  async function openEmbedded() {
    const journal = await createJournal({ dir: join(dir, 'journal'), now: () => NOW });
    const bodies = createReceiptBodies(join(dir, 'receipts'));
    const store = await openDuckDbStore(join(dir, 'index.duckdb'), {
      bodies: {
        read: (id) => {
          bodiesRead.push(id);
          return bodies.read(id);
        },
      },
    });
    const ledger = createLedger({
      signer: () => signer,
      journal,
      store,
      receiptsDir: join(dir, 'receipts'),
      checkpointFile: join(dir, 'checkpoint.json'),
      bodies,
    });
    await ledger.recover({ attachedSince: '2026-11-24', onAttached: () => {} });
    return { journal, store, ledger };
  }

  it('indexes a receipt without its body and answers it by id and by URL from memory, then from its file', async () => {
    const first = await openEmbedded();
    // A public check, so it is also the URL's public state.
    const publicCheck = checkRow(ID, 'https://x.example/', 'pay', NOW.toISOString()).body;
    const issued = await first.ledger.issue(publicCheck, { row, observation: null, attached: null });
    expect(await first.store.receipt(ID)).toEqual(issued);
    expect(await first.store.latestReceiptByUrl('https://x.example/', X_FORM)).toEqual(issued);
    await first.ledger.checkpoint();
    await first.store.close();
    await first.journal.close();

    // After a restart nothing is in memory: the bodies come from the file.
    const second = await openEmbedded();
    expect(await second.store.receipt(ID)).toEqual(issued);
    expect(await second.store.latestReceiptByUrl('https://x.example/', X_FORM)).toEqual(issued);
    expect(await second.store.publicChecksByHost('x.example', 10)).toEqual([issued]);
    // The index held no copy: every body came through the ledger.
    expect(bodiesRead).toEqual([ID, ID, ID, ID, ID]);
    await second.store.close();
    await second.journal.close();
  });
});
