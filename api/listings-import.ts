/**
 * `npm run listings:import <file>`: loads a listings file into the service's store.
 *
 * DuckDB lets one process write a database file, and the running server is that process. So: with no server
 * running, the file is imported straight into the database; with a server running, it is handed over through the
 * server's inbox and this command waits for the server's answer.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseListings } from '../core/listings.ts';
import { dataPaths } from '../io/data-paths.ts';
import { openDuckDbStore } from '../io/duckdb-store.ts';
import { handOver } from '../io/inbox.ts';
import { readConfig } from './config.ts';

const file = process.argv[2];
if (!file || file === '--help') {
  console.error(
    'usage: npm run listings:import -- <file.json>   (DATA_DIR selects the service, default ./data/runtime)',
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

await mkdir(config.dataDir, { recursive: true });
try {
  const store = await openDuckDbStore(paths.database);
  const stored = await store.importListings(rows.rows);
  await store.close();
  console.log(`imported ${stored} listings into ${paths.database}`);
} catch (error) {
  if (!/lock/i.test((error as Error).message)) throw error;
  // The server holds the database: hand the file to it and wait for its answer.
  const name = `listings-${Date.now()}-${basename(file)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/\.json$/, '')}`;
  const outcome = await handOver(paths.inbox, name, content);
  if (outcome.status === 'done') console.log(`the running server ${outcome.note}`);
  else if (outcome.status === 'failed') {
    console.error(`the running server refused the file: ${outcome.note}`);
    process.exit(1);
  } else
    console.log(
      `a server holds ${paths.database}; the file waits in ${paths.inbox} and is imported when it polls`,
    );
}
