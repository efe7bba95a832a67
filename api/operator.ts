/**
 * Runs one hosted-mode operation for the operator CLIs (`integrators-cli.ts`, `invoices-cli.ts`): straight on the
 * integrator store when no server holds it, else handed to the running server through the inbox (DuckDB is
 * single-writer), which applies it with the same `applyOp` and writes back what to print.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dataPaths } from '../io/data-paths.ts';
import type { JournalTail } from '../io/hosted-meter/usage.ts';
import { handOver } from '../io/inbox.ts';
import { openIntegratorStore } from '../io/integrators/duckdb.ts';
import { issueInvoices } from '../io/integrators/invoices.ts';
import { applyOp, type IntegratorOp } from '../io/integrators/ops.ts';
import type { IntegratorStore } from '../io/integrators/port.ts';
import { postgresIntegratorStore } from '../io/integrators/postgres.ts';
import { loadSigningKeys } from '../io/keys.ts';
import { readJournal } from '../io/receipts/journal.ts';
import { loadServiceWallet } from '../io/secrets.ts';
import { connectPostgres } from '../io/store/postgres.ts';
import { openDuckDbWatchStore } from '../io/watches/duckdb.ts';
import type { WatchStore } from '../io/watches/port.ts';
import { postgresWatchStore } from '../io/watches/postgres.ts';
import { type Config, readConfig } from './config.ts';

/** The inbox file-name prefix of operations; the server's inbox handler routes on it. */
export const OPERATOR_INBOX_PREFIX = 'integrators-';

/** Applies `op` and prints its outcome as JSON; exits non-zero on a refusal. */
export async function runOperatorOp(op: IntegratorOp): Promise<void> {
  const config = readConfig(process.env);
  const paths = dataPaths(config.dataDir);
  await mkdir(config.dataDir, { recursive: true });
  if (config.database !== null) return runOnPostgres(config, config.database, op);
  let store: IntegratorStore;
  try {
    store = await openIntegratorStore(paths.integrators, undefined, config.duckdb);
  } catch (error) {
    if (!/lock/i.test((error as Error).message)) throw error;
    const name = `${OPERATOR_INBOX_PREFIX}${Date.now()}-${op.op}`;
    const outcome = await handOver(paths.inbox, name, JSON.stringify(op), 60_000);
    if (outcome.status === 'done') console.log(outcome.note);
    else if (outcome.status === 'failed') exitWithError(`the running server refused: ${outcome.note}`);
    else console.log(`the running server has not answered yet; the operation waits in ${outcome.path}`);
    return;
  }
  try {
    const result = await applyOp(store, op, (month) =>
      invoicesWithoutServer(config, store, month, (startMs, endMs) =>
        embeddedWatchMonths(paths, startMs, endMs),
      ),
    );
    console.log(JSON.stringify(result, null, 2));
  } catch (error) {
    exitWithError((error as Error).message);
  } finally {
    await store.close();
  }
}

/** Prints to stderr and exits with status 1. */
export function exitWithError(message: string): never {
  console.error(message);
  process.exit(1);
}

/**
 * With `DATABASE_URL` the operation goes straight to PostgreSQL, whatever runs: every instance hears of key changes
 * (`io/integrators/postgres.ts`), and usage is counted there, so invoices need no journal.
 */
async function runOnPostgres(config: Config, database: { url: string }, op: IntegratorOp): Promise<void> {
  const sql = await connectPostgres(database.url, { poolSize: 2 });
  try {
    const store = postgresIntegratorStore(sql);
    const watches = postgresWatchStore(sql);
    const result = await applyOp(store, op, (month) =>
      invoicesWithoutServer(config, store, month, watches.watchMonths, async () => {}),
    );
    console.log(JSON.stringify(result, null, 2));
  } catch (error) {
    exitWithError((error as Error).message);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The hosted watch-months from the embedded watch store (free: no server holds the data folder); none without one. */
async function embeddedWatchMonths(
  paths: ReturnType<typeof dataPaths>,
  startMs: number,
  endMs: number,
): Promise<Map<string, number>> {
  if (!existsSync(paths.watches)) return new Map();
  const watches = await openDuckDbWatchStore(paths.watches);
  try {
    return await watches.watchMonths(startMs, endMs);
  } finally {
    await watches.close();
  }
}

async function invoicesWithoutServer(
  config: Config,
  store: IntegratorStore,
  month: string,
  watchMonths: WatchStore['watchMonths'],
  tail?: JournalTail,
) {
  const paths = dataPaths(config.dataDir);
  const keys = await loadSigningKeys({
    dir: paths.keys,
    ...(config.signingKeyFile ? { keyFile: config.signingKeyFile } : {}),
  });
  const wallet = await loadServiceWallet(paths.keys, config.serviceWallet);
  return issueInvoices({
    store,
    // No journal yet means no hosted use yet.
    tail:
      tail ??
      (async (visit, options) => {
        if (existsSync(paths.journal)) await readJournal(paths.journal, visit, options);
      }),
    month,
    now: new Date(),
    signer: keys.signer,
    dir: paths.invoices,
    payTo: wallet.address,
    baseUrl: config.baseUrl,
    random: (n) => new Uint8Array(randomBytes(n)),
    watchMonths,
  });
}
