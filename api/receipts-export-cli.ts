/**
 * `npm run receipts:export -- [--out DIR] [--journal DIR]`: writes the signed receipt files missing from `--out`
 * (default `DATA_DIR/receipts`), from PostgreSQL when `DATABASE_URL` is set (every instance's receipts), else from
 * `DATA_DIR/journal`; `--journal` reads that journal folder instead (an instance's, running or not). Files already
 * there are kept. Prints what it did as JSON; exits 1 when a receipt could not be written, 2 on a usage error.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dataPaths } from '../io/data-paths.ts';
import {
  exportReceipts,
  journalReceipts,
  postgresReceipts,
  type ReceiptSource,
} from '../io/receipts/export.ts';
import { connectPostgres } from '../io/store/postgres.ts';
import { readConfig } from './config.ts';

const USAGE = 'usage: npm run receipts:export -- [--out DIR] [--journal DIR]';

let values: { out?: string; journal?: string };
try {
  ({ values } = parseArgs({ options: { out: { type: 'string' }, journal: { type: 'string' } } }));
} catch (error) {
  console.error(`receipts:export: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const config = readConfig(process.env);
const paths = dataPaths(config.dataDir);
const out = resolve(values.out ?? paths.receipts);

/** The journal named, the instance's own without a database, else PostgreSQL. */
async function openSource(): Promise<{ from: string; source: ReceiptSource; end(): Promise<void> }> {
  if (values.journal !== undefined || config.database === null) {
    const dir = resolve(values.journal ?? paths.journal);
    if (!existsSync(dir)) throw new Error(`no journal folder at ${dir}`);
    return { from: `journal ${dir}`, source: journalReceipts(dir), end: async () => {} };
  }
  const sql = await connectPostgres(config.database.url, { poolSize: 1 });
  return { from: 'postgres', source: postgresReceipts(sql), end: () => sql.end({ timeout: 5 }) };
}

try {
  const { from, source, end } = await openSource();
  try {
    const counts = await exportReceipts(source, out);
    console.log(JSON.stringify({ from, out, ...counts, refused: counts.refused.length }, null, 2));
    for (const line of counts.refused) console.error(`receipts:export: not written: ${line}`);
    process.exitCode = counts.refused.length > 0 ? 1 : 0;
  } finally {
    await end();
  }
} catch (error) {
  console.error(`receipts:export: ${(error as Error).message}`);
  process.exitCode = 1;
}
