/**
 * `npm run listings:import <file>`: loads a listings file into the store the service reads.
 *
 * With `DATABASE_URL` that store is PostgreSQL, shared by every instance: the file goes straight there, whether or
 * not instances run (as `npm run integrators` does), and never into a DuckDB file no instance reads. Without it,
 * DuckDB lets one process write a database file, and the running server is that process. So: with no server
 * running, the file is imported straight into the database; with a server running, it is handed over through the
 * server's inbox and this command waits for the server's answer.
 *
 * Only a success line (`imported N listings into …`, or from the server `the running server imported N listings`)
 * means the listings reached the state the service reads; anything else exits non-zero:
 * 1 when the import failed, 75 (EX_TEMPFAIL) when a running server has not taken the file yet (it waits in the inbox
 * and is imported when the server polls; running the command again imports the same listings again, harmlessly).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { type ListingRow, parseListings } from '../core/listings.ts';
import { dataPaths } from '../io/data-paths.ts';
import { handOver } from '../io/inbox.ts';
import { openDuckDbStore } from '../io/store/duckdb.ts';
import { openPostgresStore } from '../io/store/postgres.ts';
import { readConfig } from './config.ts';

const file = process.argv[2];
if (!file || file === '--help') {
  console.error(
    'usage: npm run listings:import -- <file.json>   (DATABASE_URL, else DATA_DIR, selects the service; default ./data/runtime)',
  );
  process.exit(2);
}

const config = readConfig(process.env);
const paths = dataPaths(config.dataDir);
let content: string;
let rows: ReturnType<typeof parseListings>;
try {
  content = await readFile(file, 'utf8');
  rows = parseListings(JSON.parse(content));
} catch (error) {
  console.error(`listings:import: cannot read ${file}: ${(error as Error).message}`);
  process.exit(1);
}
if (!rows.ok) {
  console.error(`listings:import: ${file} is not a listings file: ${rows.message}`);
  process.exit(1);
}

if (config.database !== null) await importIntoPostgres(config.database.url, rows.rows);
else await importIntoDuckDb(rows.rows, content);

async function importIntoPostgres(url: string, listings: ListingRow[]): Promise<void> {
  // The host and database only: the URL may carry a password.
  const { host, pathname } = new URL(url);
  const where = `PostgreSQL at ${host}${pathname}`;
  try {
    const store = await openPostgresStore(url, { poolSize: 1 });
    try {
      const stored = await store.importListings(listings);
      console.log(`imported ${stored} listings into ${where}`);
    } finally {
      await store.close();
    }
  } catch (error) {
    console.error(`listings:import: cannot import into ${where}: ${(error as Error).message}`);
    process.exit(1);
  }
}

async function importIntoDuckDb(listings: ListingRow[], text: string): Promise<void> {
  await mkdir(config.dataDir, { recursive: true });
  try {
    const store = await openDuckDbStore(paths.database, { limits: config.duckdb });
    const stored = await store.importListings(listings);
    await store.close();
    console.log(`imported ${stored} listings into ${paths.database}`);
    return;
  } catch (error) {
    if (!/lock/i.test((error as Error).message)) {
      console.error(`listings:import: cannot import into ${paths.database}: ${(error as Error).message}`);
      process.exit(1);
    }
  }
  // The server holds the database: hand the file to it and wait for its answer.
  const name = `listings-${Date.now()}-${basename(file as string)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/\.json$/, '')}`;
  const outcome = await handOver(paths.inbox, name, text, config.importWaitMs);
  if (outcome.status === 'done') console.log(`the running server ${outcome.note}`);
  else if (outcome.status === 'failed') {
    console.error(`listings:import: the running server refused the file: ${outcome.note}`);
    process.exit(1);
  } else {
    console.error(
      `listings:import: not imported yet: a server holds ${paths.database} and has not taken the file; it waits in ${outcome.path} and is imported when the server polls`,
    );
    process.exit(75);
  }
}
