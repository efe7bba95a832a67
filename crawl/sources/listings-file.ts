/**
 * A JSON file in the `npm run listings:import` format (`core/listings.ts`) as a source. Each record counts for
 * its own `source`; the report is keyed by the file's source name. Bad records are counted, never fatal.
 */
import { readFile, stat } from 'node:fs/promises';
import { readListingRecords } from '../../core/listings.ts';
import { itemsNote } from '../../core/source-listing.ts';
import { failedSource, type SourceRead } from './_result.ts';
import { SOURCE_MAX_BYTES } from './fetch-json.ts';

/** Reads a listings file. */
export async function readListingsFile(name: string, path: string): Promise<SourceRead> {
  let value: unknown;
  try {
    const size = (await stat(path)).size;
    if (size > 4 * SOURCE_MAX_BYTES)
      return failedSource(name, `the file is over ${4 * SOURCE_MAX_BYTES} bytes`);
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return failedSource(name, code === 'ENOENT' ? 'no such file' : 'the file is not readable JSON');
  }
  if (!Array.isArray(value)) return failedSource(name, 'a listings file is a JSON array of records');
  const read = readListingRecords(value);
  return {
    name,
    listings: read.listings,
    report: {
      ok: true,
      items: read.listings.length,
      note: itemsNote(read.listings.length, read.refused, read.firstRefusal),
      skipped: false,
    },
  };
}
