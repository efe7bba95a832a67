/**
 * Where the service's shared state lives (docs/decisions.md "Shared state on PostgreSQL"): embedded (DuckDB under `DATA_DIR`,
 * the quota, usage meter, rate limit and replay guard in this process's memory, restored from the journal), or with
 * `DATABASE_URL` all of them in PostgreSQL, shared by every instance (docs/deploy.md). The journal, the signing keys
 * and the receipt files stay under each instance's own `DATA_DIR` either way.
 */

import { HOSTED } from '../core/hosted.ts';
import type { dataPaths } from '../io/data-paths.ts';
import { postgresMeter } from '../io/hosted-meter/postgres.ts';
import { openIntegratorStore } from '../io/integrators/duckdb.ts';
import type { IntegratorStore } from '../io/integrators/port.ts';
import { postgresIntegratorStore, watchIntegrators } from '../io/integrators/postgres.ts';
import { boundedPort } from '../io/postgres/wait.ts';
import { createQuota, type Quota, quotaPort } from '../io/quota/memory.ts';
import type { QuotaPort } from '../io/quota/port.ts';
import { openPostgresQuota } from '../io/quota/postgres.ts';
import { postgresRateLimiter } from '../io/rate-limit/postgres.ts';
import type { ReceiptBodies } from '../io/receipts/bodies.ts';
import type { ReplayGuard } from '../io/replay/port.ts';
import { openPostgresReplayGuard } from '../io/replay/postgres.ts';
import { openDuckDbStore } from '../io/store/duckdb.ts';
import type { Store } from '../io/store/port.ts';
import { connectPostgres, postgresStore } from '../io/store/postgres.ts';
import { memoryTasks } from '../io/tasks/memory.ts';
import type { PublishedTasks } from '../io/tasks/port.ts';
import { postgresTasks } from '../io/tasks/postgres.ts';
import { openDuckDbWatchStore } from '../io/watches/duckdb.ts';
import type { WatchStore } from '../io/watches/port.ts';
import { postgresWatchStore } from '../io/watches/postgres.ts';
import type { Config } from './config.ts';
import type { SharedHosted } from './hosted.ts';

export type ServiceState = {
  store: Store;
  /** What the access gate reserves free uses from. */
  quota: QuotaPort;
  /** The quota the journal's uses are restored into at start-up (the embedded one; a shared one needs none). */
  journaledQuota: Quota;
  integrators: IntegratorStore;
  /** Hosted counters shared by every instance; undefined when embedded. */
  sharedHosted?: SharedHosted;
  /** The seller's replay guard when shared; undefined keeps the seller's in-memory one. */
  replayGuard?: ReplayGuard;
  /** Tasks of known-answer runs: this process's when embedded, every instance's in PostgreSQL. */
  tasks: PublishedTasks;
  /** The ledger's wait for a receipt's commit in the shared store; undefined when embedded. */
  committed?: (receiptId: string) => Promise<void>;
  /** Watches, their schedule, events and outbox: a DuckDB file of their own when embedded, else PostgreSQL. */
  watches: WatchStore;
  /** Ends the database pool, after every part over it is closed. */
  close(): Promise<void>;
};

/**
 * Opens the state `config` names. `saltCheck` is a value derived from this instance's salt (never the salt): the
 * instances sharing a database must hash client addresses alike, or each would count every client apart.
 * `bodies` gives the embedded index the bodies of the receipts the ledger keeps as files (`io/receipts/bodies.ts`);
 * PostgreSQL keeps every body, since other instances serve receipts from it alone.
 */
export async function openState(
  config: Config,
  paths: ReturnType<typeof dataPaths>,
  now: () => Date,
  saltCheck: string,
  bodies: ReceiptBodies,
): Promise<ServiceState> {
  if (config.database === null) {
    const quota = createQuota({ now });
    return {
      store: await openDuckDbStore(paths.database, { bodies, limits: config.duckdb }),
      quota: quotaPort(quota),
      journaledQuota: quota,
      integrators: await openIntegratorStore(paths.integrators, undefined, config.duckdb),
      tasks: memoryTasks(),
      watches: await openDuckDbWatchStore(paths.watches, config.duckdb),
      close: async () => {},
    };
  }
  const sql = await connectPostgres(config.database.url, { poolSize: config.database.poolSize });
  // What a request reads or waits for gets a deadline (io/postgres/wait.ts); the background work does not.
  const { waitMs } = config.database;
  try {
    const store = boundedPort(postgresStore(sql, { endPool: false }), STORE_WAITS, waitMs);
    // In the background: the instance answers meanwhile, and its first lookup waits for what is left of the load.
    store
      .preloadPaidCalls()
      .catch((error: unknown) =>
        console.error('[spotcheck] [store] recent paid calls not loaded yet', error),
      );
    return {
      store,
      quota: await openPostgresQuota(sql, now, saltCheck, waitMs),
      journaledQuota: createQuota({ now }),
      integrators: boundedPort(postgresIntegratorStore(sql), INTEGRATOR_WAITS, waitMs),
      sharedHosted: {
        meter: postgresMeter(sql, now, waitMs),
        rate: postgresRateLimiter(sql, {
          limit: HOSTED.ratePerMinute,
          windowSeconds: 60,
          now: () => now().getTime(),
          waitMs,
        }),
        watch: (onChange) => watchIntegrators(sql, onChange),
      },
      replayGuard: await openPostgresReplayGuard(sql, now, waitMs),
      tasks: boundedPort(postgresTasks(sql), ['publish', 'list'], waitMs),
      committed: (id) => store.committed(id),
      watches: boundedPort(postgresWatchStore(sql), WATCH_WAITS, waitMs),
      close: () => sql.end({ timeout: 5 }),
    };
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
}

/** The store's reads and the wait for a receipt's commit; not its imports, catch-ups and flushes (background work). */
const STORE_WAITS = [
  'observations',
  'receipt',
  'latestReceiptByUrl',
  'listReceipts',
  'listing',
  'endpoint',
  'paidCalls',
  'observationsByHost',
  'checksByHost',
  'publicChecksByHost',
  'committed',
] as const;

/** Every call of the integrator store but `close`: the service makes each of them within a request or a short job. */
const INTEGRATOR_WAITS = [
  'createIntegrator',
  'addKey',
  'setKeyState',
  'integrators',
  'keys',
  'usageCursor',
  'foldUsage',
  'usage',
  'endUserHashes',
  'addInvoice',
  'invoice',
  'invoices',
  'claimInvoice',
  'releaseInvoice',
  'markInvoicePaid',
  'addOverpayment',
  'overpayments',
  'markInvoiceRun',
  'invoiceRuns',
] as const;

/** The watch store's calls a request makes (the watcher's background passes are not bounded). */
const WATCH_WAITS = ['createWatch', 'watch', 'setStatus', 'events', 'watchesOfIntegrator'] as const;
