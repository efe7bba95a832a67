/**
 * `npm run receipts:export` from a journal (docs/deploy.md "Receipts"): a lost receipts folder comes back from the
 * journal of its instance, byte for byte, while that instance still runs; files already there are kept, and a record
 * that cannot make a file is reported, never written. The PostgreSQL source is exercised with real instances in
 * `test/e2e/instances-crash.test.ts`.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newReceiptId } from '../../../core/receipt.ts';
import { exportReceipts, journalReceipts } from '../../../io/receipts/export.ts';
import { createJournal, type Journal } from '../../../io/receipts/journal.ts';
import { createLedger, type Ledger } from '../../../io/receipts/ledger.ts';
import { createMemoryStore } from '../../../io/store/memory.ts';
import { checkRow } from '../../fixtures/check-row.ts';
import { runCli } from '../../helpers/cli.ts';

const NOW = new Date('2026-11-24T04:00:00.000Z');
const signer = { kid: 'k1', sign: (bytes: Uint8Array) => new Uint8Array(64).fill(bytes.length % 251) };
const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

let dir: string;
let journal: Journal;
let ledger: Ledger;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-receipt-export-'));
  journal = await createJournal({ dir: join(dir, 'journal'), now: () => NOW });
  ledger = createLedger({
    signer: () => signer,
    journal,
    store: createMemoryStore(),
    receiptsDir: join(dir, 'receipts'),
    checkpointFile: join(dir, 'checkpoint.json'),
  });
  await ledger.recover({ attachedSince: '2026-11-24', onAttached: () => {} });
});
afterEach(async () => {
  await journal.close();
  await rm(dir, { recursive: true, force: true });
});

/** Issues `n` receipts through the ledger and waits for their files; resolves with each id's file text. */
async function issue(n: number): Promise<Map<string, string>> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = newReceiptId('sc-', random);
    const { body, ...row } = checkRow(id, `https://x${i}.example/`, 'pay', NOW.toISOString(), {
      note: 'é \u2028',
    });
    // Members out of canonical order, as an assembled check has them.
    const unsigned = Object.fromEntries(Object.entries(body).reverse());
    await ledger.issue(unsigned, { row, observation: null, attached: null });
    ids.push(id);
  }
  await ledger.flushFiles();
  const texts = new Map<string, string>();
  for (const id of ids) texts.set(id, await readFile(join(dir, 'receipts', `${id}.json`), 'utf8'));
  return texts;
}

describe('receipt files exported from a journal', () => {
  it('writes back a lost folder byte for byte while the journal is open, then keeps what is there', async () => {
    const texts = await issue(150);
    await rm(join(dir, 'receipts'), { recursive: true });
    const out = join(dir, 'restored');

    const first = await exportReceipts(journalReceipts(join(dir, 'journal')), out);
    expect(first).toEqual({ receipts: 150, written: 150, present: 0, refused: [] });
    const names = (await readdir(out)).sort();
    expect(names).toEqual([...texts.keys()].map((id) => `${id}.json`).sort());
    for (const [id, text] of texts) expect(await readFile(join(out, `${id}.json`), 'utf8')).toBe(text);

    // A file already there, even one that differs, is left as it is.
    const [kept] = texts.keys();
    await writeFile(join(out, `${kept}.json`), 'left by hand\n');
    const second = await exportReceipts(journalReceipts(join(dir, 'journal')), out);
    expect(second).toEqual({ receipts: 150, written: 0, present: 150, refused: [] });
    expect(await readFile(join(out, `${kept}.json`), 'utf8')).toBe('left by hand\n');
  });

  it('reports a record whose id cannot name a file, or that has no signature, and writes no file for it', async () => {
    await issue(2);
    await journal.append({ v: 1, kind: 'receipt', receipt: { id: '../escape', kid: 'k1', signature: 's' } });
    await journal.append({ v: 1, kind: 'receipt', receipt: { id: newReceiptId('sc-', random), kid: 'k1' } });
    await journal.append({ v: 1, kind: 'attachment', attached: { units: 1 } });
    const out = join(dir, 'restored');

    const counts = await exportReceipts(journalReceipts(join(dir, 'journal')), out);
    expect(counts.receipts).toBe(4);
    expect(counts.written).toBe(2);
    expect(counts.refused).toEqual([
      'receipt 3: no receipt id',
      expect.stringMatching(/^sc-[a-z2-7]{26}: signedReceiptText: the receipt has no signature$/),
    ]);
    expect(await readdir(out)).toHaveLength(2);
    expect(await readdir(dir)).not.toContain('escape.json');
  });

  it('runs as `npm run receipts:export`, from DATA_DIR/journal into DATA_DIR/receipts by default', async () => {
    const texts = await issue(3);
    await rm(join(dir, 'receipts'), { recursive: true });

    const run = await runCli('receipts-export-cli.ts', [], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      from: `journal ${join(dir, 'journal')}`,
      out: join(dir, 'receipts'),
      receipts: 3,
      written: 3,
      present: 0,
      refused: 0,
    });
    for (const [id, text] of texts)
      expect(await readFile(join(dir, 'receipts', `${id}.json`), 'utf8')).toBe(text);

    const missing = await runCli('receipts-export-cli.ts', ['--journal', join(dir, 'nowhere')], dir);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain(`no journal folder at ${join(dir, 'nowhere')}`);
    const usage = await runCli('receipts-export-cli.ts', ['--bogus'], dir);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: npm run receipts:export');
  });
});
