import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newReceiptId } from '../../../core/receipt.ts';
import { createReceiptBatches } from '../../../crawl/receipt-batches.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-batches-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const id = () => newReceiptId('sc-', (n) => new Uint8Array(randomBytes(n)));

describe('receipt batches of a crawl', () => {
  it('writes every queued receipt as its signed text and a newline, in a folder it makes', async () => {
    const receipts = join(dir, 'receipts');
    const files = createReceiptBatches(receipts);
    const ids = Array.from({ length: 2500 }, id);
    // More than the writer may lag behind: some adds wait for it.
    await Promise.all(ids.map((rid, i) => files.add(rid, `{"id":"${rid}","n":${i}}`)));
    await files.close();
    expect((await readdir(receipts)).sort()).toEqual(ids.map((rid) => `${rid}.json`).sort());
    expect(await readFile(join(receipts, `${ids[7]}.json`), 'utf8')).toBe(`{"id":"${ids[7]}","n":7}\n`);
  });

  it('refuses at close when a file could not be written, so the run is not published without it', async () => {
    const files = createReceiptBatches(dir);
    const good = id();
    const bad = id();
    // A folder where the file should go: the writer thread's rename fails (and is only logged there).
    await mkdir(join(dir, `${bad}.json`));
    await files.add(good, `{"id":"${good}"}`);
    await files.add(bad, `{"id":"${bad}"}`);
    await expect(files.close()).rejects.toThrow(/1 receipt files were not written/);
  });

  it('refuses an id that is not a receipt id before it becomes a file name', async () => {
    const files = createReceiptBatches(dir);
    await expect(files.add('../evil', '{}')).rejects.toThrow(TypeError);
    await files.close();
  });
});
