/**
 * The PostgreSQL schema, as numbered migrations applied when the store opens. Several instances may start at
 * once: each runs the pending migrations in one transaction that first takes a transaction-scoped advisory lock,
 * so one applies them and the others, once the lock is theirs, find nothing left to do. A migration is never
 * edited once released; a change is a new entry.
 */
import type { Sql } from 'postgres';

/** The advisory lock key of migrations: any constant 64-bit number no other application on the database uses. */
const MIGRATION_LOCK = 0x5370_6f74_6368n; // "Spotch"

export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'index of receipts, observations, listings and paid calls',
    sql: `
CREATE TABLE receipts (
  id TEXT PRIMARY KEY, type TEXT NOT NULL, issued_at TEXT NOT NULL, url TEXT, url_norm TEXT, host TEXT,
  method TEXT, verdict TEXT, reason TEXT, check_type TEXT, mode TEXT, tier TEXT, body TEXT NOT NULL,
  public_state BOOLEAN NOT NULL);
CREATE INDEX receipts_by_url ON receipts (url_norm, issued_at DESC, id DESC) WHERE public_state;
CREATE INDEX receipts_by_time ON receipts (issued_at DESC, id DESC);
CREATE INDEX receipts_by_host ON receipts (host, issued_at DESC);
CREATE TABLE observations (
  url_norm TEXT NOT NULL, method TEXT NOT NULL, host TEXT, observed_at TEXT NOT NULL, http_status INTEGER,
  price_usd DOUBLE PRECISION, amount_atomic TEXT, network TEXT, asset TEXT, pay_to TEXT,
  PRIMARY KEY (url_norm, method, observed_at));
CREATE INDEX observations_by_host ON observations (host, observed_at DESC);
CREATE TABLE listings (
  url_norm TEXT NOT NULL, method TEXT NOT NULL, url TEXT NOT NULL, price_usd DOUBLE PRECISION, network TEXT,
  asset TEXT, pay_to TEXT, source TEXT NOT NULL, PRIMARY KEY (url_norm, method, source));
CREATE TABLE paid_calls (
  service_id TEXT NOT NULL, endpoint_url TEXT NOT NULL, host TEXT, task TEXT NOT NULL, called_at TEXT NOT NULL,
  price_atomic TEXT NOT NULL, network TEXT NOT NULL, pay_to TEXT NOT NULL, settlement_tx TEXT,
  delivered BOOLEAN NOT NULL, known_answer TEXT, http_status INTEGER, broken_on_seller_side BOOLEAN NOT NULL,
  receipt_id TEXT, why TEXT);
CREATE INDEX paid_calls_by_service ON paid_calls (service_id);
CREATE INDEX paid_calls_by_receipt ON paid_calls (receipt_id);
`,
  },
  {
    version: 2,
    name: 'shared state of several instances: quotas, payment claims, hosted mode',
    sql: `
CREATE TABLE quota_use (
  day TEXT NOT NULL, bucket TEXT NOT NULL, id TEXT NOT NULL, used INTEGER NOT NULL,
  PRIMARY KEY (day, bucket, id));
CREATE TABLE payment_claims (
  key TEXT PRIMARY KEY, reason TEXT NOT NULL, until_epoch BIGINT NOT NULL);
CREATE TABLE installation (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE integrators (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, credit_limit_atomic TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE service_keys (
  id TEXT PRIMARY KEY, integrator TEXT NOT NULL, secret_hash TEXT NOT NULL, label TEXT NOT NULL,
  state TEXT NOT NULL, created_at TEXT NOT NULL, changed_at TEXT NOT NULL);
CREATE TABLE hosted_usage (
  integrator TEXT NOT NULL, month TEXT NOT NULL, calls BIGINT NOT NULL, PRIMARY KEY (integrator, month));
CREATE TABLE hosted_end_users (
  integrator TEXT NOT NULL, month TEXT NOT NULL, end_user TEXT NOT NULL, calls BIGINT NOT NULL,
  PRIMARY KEY (integrator, month, end_user));
CREATE TABLE hosted_cursor (one INTEGER PRIMARY KEY, cursor TEXT NOT NULL);
CREATE TABLE hosted_rate (key TEXT PRIMARY KEY, times BIGINT[] NOT NULL);
CREATE TABLE invoices (
  id TEXT PRIMARY KEY, integrator TEXT NOT NULL, month TEXT NOT NULL, total_atomic TEXT NOT NULL,
  body TEXT NOT NULL, status TEXT NOT NULL, tx TEXT, paid_at TEXT);
`,
  },
  {
    version: 3,
    name: 'versioned paid calls, so each instance keeps the recent ones in memory and catches up by version',
    sql: `
CREATE TABLE paid_calls_version (one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one), version BIGINT NOT NULL);
INSERT INTO paid_calls_version (one, version) VALUES (true, 0);
ALTER TABLE paid_calls ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX paid_calls_by_version ON paid_calls (version);
`,
  },
  {
    version: 4,
    name: 'the tasks known-answer runs publish, so every instance lists and accepts them',
    sql: `
CREATE TABLE published_tasks (name TEXT PRIMARY KEY, run_id TEXT NOT NULL, task TEXT NOT NULL);
`,
  },
  {
    version: 5,
    name: 'invoices: pay-link tokens, settling claims, overpayments, and the months invoiced',
    // Invoices stored before get a token from the server's own strong random source (gen_random_uuid, 122 bits).
    sql: `
ALTER TABLE invoices ADD COLUMN pay_token TEXT, ADD COLUMN claimant TEXT, ADD COLUMN claim_until BIGINT;
UPDATE invoices SET pay_token = replace(gen_random_uuid()::text, '-', '') WHERE pay_token IS NULL;
ALTER TABLE invoices ALTER COLUMN pay_token SET NOT NULL;
CREATE TABLE invoice_overpayments (
  tx TEXT PRIMARY KEY, invoice_id TEXT NOT NULL, integrator TEXT NOT NULL, payer TEXT NOT NULL,
  amount_atomic TEXT NOT NULL, recorded_at TEXT NOT NULL);
CREATE INDEX invoice_overpayments_by_integrator ON invoice_overpayments (integrator);
CREATE TABLE invoice_runs (month TEXT PRIMARY KEY, ran_at TEXT NOT NULL);
`,
  },
  {
    version: 6,
    name: "receipts by the exact URL and method requested, and listings by host, for a URL's public state",
    // by-url reads the newest public receipt of one exact form, a badge the listed forms of one host
    // (core/public-state.ts). Receipts already carry `url` and `method`; a listing's host is read from its
    // normalized URL (lower-case, no default port, no userinfo: what follows `://` up to the path or query).
    sql: `
CREATE INDEX receipts_by_form ON receipts (url, method, issued_at DESC, id DESC) WHERE public_state;
ALTER TABLE listings ADD COLUMN host TEXT;
UPDATE listings SET host = substring(url_norm from '://([^/?]*)');
CREATE INDEX listings_by_host ON listings (host);
`,
  },
  {
    version: 7,
    name: 'watches: the watches, the schedule of their endpoints, their signed events and the webhook outbox',
    // Due endpoints and deliveries are leased with FOR UPDATE SKIP LOCKED (io/watches/postgres.ts); times the
    // leases compare are epoch milliseconds.
    sql: `
CREATE TABLE watches (
  id TEXT PRIMARY KEY, token_hash TEXT NOT NULL, url TEXT NOT NULL, url_norm TEXT NOT NULL, method TEXT NOT NULL,
  pay_to TEXT, network TEXT, claimed_price TEXT, webhook_url TEXT, events TEXT NOT NULL, owner TEXT NOT NULL,
  owner_key TEXT, created_at TEXT NOT NULL, expires_at BIGINT NOT NULL, status TEXT NOT NULL,
  expiring_sent BOOLEAN NOT NULL);
CREATE INDEX watches_by_endpoint ON watches (url, method) WHERE status = 'active';
CREATE INDEX watches_by_owner ON watches (owner_key) WHERE owner_key IS NOT NULL;
CREATE TABLE watch_endpoints (
  url TEXT NOT NULL, method TEXT NOT NULL, next_due BIGINT NOT NULL, lease_until BIGINT NOT NULL, states TEXT,
  PRIMARY KEY (url, method));
CREATE INDEX watch_endpoints_due ON watch_endpoints (next_due);
CREATE TABLE watch_events (
  seq BIGSERIAL, id TEXT PRIMARY KEY, watch_id TEXT NOT NULL, event TEXT NOT NULL, occurred_at TEXT NOT NULL,
  body TEXT NOT NULL);
CREATE INDEX watch_events_by_watch ON watch_events (watch_id, seq DESC);
CREATE TABLE watch_outbox (
  event_id TEXT PRIMARY KEY, watch_id TEXT NOT NULL, webhook_url TEXT NOT NULL, body TEXT NOT NULL,
  attempts INTEGER NOT NULL, first_due BIGINT NOT NULL, next_attempt BIGINT NOT NULL, lease_until BIGINT NOT NULL,
  state TEXT NOT NULL, last_error TEXT);
CREATE INDEX watch_outbox_due ON watch_outbox (next_attempt) WHERE state = 'pending';
`,
  },
  {
    version: 8,
    name: 'watches: when a watch stopped being active, for the hosted invoice per watch-month',
    // Null while a watch is active; set once, by its first status but active (io/watches/postgres.ts).
    sql: `
ALTER TABLE watches ADD COLUMN ended_at BIGINT;
`,
  },
  {
    version: 9,
    name: "invoices: the authorization a settling claim settles, so a dead instance's settlement is found on chain",
    // Null for claims taken before; api/invoice-claims.ts reads the chain only for claims that name one.
    sql: `
ALTER TABLE invoices ADD COLUMN claim_payer TEXT, ADD COLUMN claim_nonce TEXT;
`,
  },
];

/** Applies the pending migrations; safe when several instances call it at once. Resolves with the version. */
export async function migrate(sql: Sql): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
    const [row] = await tx<
      Array<{ v: number }>
    >`SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations`;
    const current = row?.v ?? 0;
    const known = MIGRATIONS.at(-1)?.version ?? 0;
    if (current > known) {
      throw new Error(
        `The database schema is at version ${current}, newer than this build knows (${known}): upgrade this instance.`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await tx.unsafe(migration.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`;
    }
    return known;
  });
}
