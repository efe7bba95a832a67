/**
 * Paths under `DATA_DIR` (docs/architecture.md "Durability promises"): one place for the server, the CLIs and the
 * crawl, which must not import each other.
 */
import { join } from 'node:path';

/** Every path under DATA_DIR. */
export function dataPaths(dataDir: string) {
  return {
    database: join(dataDir, 'spotcheck.duckdb'),
    journal: join(dataDir, 'journal'),
    receipts: join(dataDir, 'receipts'),
    keys: join(dataDir, 'keys'),
    inbox: join(dataDir, 'inbox'),
    /** The ledger's index checkpoint. */
    checkpoint: join(dataDir, 'index-checkpoint.json'),
    /** Hosted mode's integrators, keys, usage snapshot and invoices (its own file: `io/integrators/duckdb.ts`). */
    integrators: join(dataDir, 'integrators.duckdb'),
    invoices: join(dataDir, 'invoices'),
    /** Watches, their schedule, events and webhook outbox when embedded (its own file: `io/watches/duckdb.ts`). */
    watches: join(dataDir, 'watches.duckdb'),
    /** The built public site (`npm run build:site`), served from the same origin as the API. */
    site: join(dataDir, 'site'),
  };
}
