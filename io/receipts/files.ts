/**
 * One JSON file per receipt, `<dir>/<id>.json`: the bytes the CDN serves and auditors download.
 *
 * Written without fsync on purpose: the journal (`io/receipts/journal.ts`) is the durable copy and these files are a
 * view rebuilt from it at start-up. The rename keeps a reader from ever seeing a half-written file.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isReceiptId } from '../../core/receipt.ts';

/**
 * Writes `<dir>/<id>.json` atomically (temp file + rename) as `JSON.stringify(receipt, null, 2)`; the
 * signature covers the RFC 8785 bytes, so the indentation does not matter to verification.
 * Throws a `TypeError` for an id that is not a receipt id (the id becomes a file name).
 * @example await writeReceiptFile(join(dataDir, 'receipts'), signedReceipt)
 */
export function writeReceiptFile(dir: string, receipt: { id: string }): Promise<void> {
  return writeReceiptText(dir, receipt.id, `${JSON.stringify(receipt, null, 2)}\n`);
}

/**
 * Writes `<dir>/<id>.json` atomically (temp file + rename) with `text` as it is, making `dir` if it is missing.
 * Throws a `TypeError` for an id that is not a receipt id (the id becomes a file name).
 * @example await writeReceiptText(bucket, receipt.id, `${signedReceiptText(receipt)}\n`)
 */
export async function writeReceiptText(dir: string, id: string, text: string): Promise<void> {
  if (!isReceiptId(id)) throw new TypeError(`writeReceiptText: ${JSON.stringify(id)} is not a receipt id`);
  const path = join(dir, `${id}.json`);
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    // The folder is made only when missing: a recursive mkdir per receipt cost a crawl 6 % of its CPU.
    await writeFile(tmp, text, 'utf8').catch(async (error: unknown) => {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
      await mkdir(dir, { recursive: true });
      await writeFile(tmp, text, 'utf8');
    });
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/**
 * Reads and parses `<dir>/<id>.json`; null when the id is not a receipt id (checked before the file system
 * is touched, so `../../` never reaches a path) or when there is no such file.
 * @example const receipt = await readReceiptFile(dir, 'sc-…')
 */
export async function readReceiptFile(dir: string, id: string): Promise<object | null> {
  if (!isReceiptId(id)) return null;
  let text: string;
  try {
    text = await readFile(join(dir, `${id}.json`), 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  }
  const value: unknown = JSON.parse(text);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null;
}
