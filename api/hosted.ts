/**
 * Hosted mode in the server (docs/api.md §5.4, §8): the integrator store, the keys in memory (a hosted call never waits
 * for the database), the usage meter restored from the snapshot and the journal, the per-key rate limit, and the
 * operator's operations arriving through the inbox. Routes meet it through the access gate.
 *
 * With `DATABASE_URL` the meter and the rate limit are shared by every instance (`io/hosted-meter/postgres.ts`,
 * `io/rate-limit/postgres.ts`): a use is
 * durable once reserved there, so nothing is journaled or folded, and the keys are reloaded whenever any instance
 * or CLI announces a change (`io/integrators/postgres.ts`), and every minute besides.
 */
import type { H3Event } from 'h3';
import { HOSTED } from '../core/hosted.ts';
import type { HostedUse } from '../core/hosted-meter.ts';
import type { Signer } from '../core/receipt.ts';
import { hashSecret, parseServiceKey, sameHash } from '../core/service-key.ts';
import { createHostedMeter, meterPort } from '../io/hosted-meter/memory.ts';
import type { MeterPort } from '../io/hosted-meter/port.ts';
import {
  compactUsage,
  hostedUseRecord,
  type JournalTail,
  loadMeter,
  recordHostedUse,
} from '../io/hosted-meter/usage.ts';
import { issueInvoices } from '../io/integrators/invoices.ts';
import { applyOp, parseOp } from '../io/integrators/ops.ts';
import type { IntegratorRow, IntegratorStore, KeyRow } from '../io/integrators/port.ts';
import { createRateLimiter, ratePort } from '../io/rate-limit/memory.ts';
import type { RatePort } from '../io/rate-limit/port.ts';
import type { Journal } from '../io/receipts/journal.ts';
import { readCredential } from './credentials.ts';
import { apiError } from './errors.ts';

/** Who a valid hosted key belongs to. */
export type HostedCaller = { key: KeyRow; integrator: IntegratorRow };

export type Hosted = {
  store: IntegratorStore;
  /** Where invoice files are written (`DATA_DIR/invoices`). */
  invoicesDir: string;
  /** The wallet invoices are paid to (the service wallet). */
  payTo: string;
  meter: MeterPort;
  rate: RatePort;
  /** The caller of a presented key, or why it is refused (every refusal is a 401, docs/api.md §5.5). */
  authenticate(presented: string): { ok: true; caller: HostedCaller } | { ok: false; message: string };
  /**
   * What a receipt's journal record carries for this use (`IssueMeta['attached']`), so the use is durable with the
   * answer in one fsync; null when the meter counts uses where they are reserved (shared counters).
   */
  attachment(use: HostedUse, keyId: string): unknown;
  /** Durably records a use that was not journaled with a receipt, before its answer leaves. */
  record(use: HostedUse, keyId: string): Promise<void>;
  /** Applies an operator operation handed over through the inbox; returns the note to print. */
  apply(content: string): Promise<string>;
  /** Folds the journal's hosted uses into the store's snapshot. */
  compact(): Promise<number>;
  close(): Promise<void>;
};

/** Counters every instance shares (`DATABASE_URL`), and how this instance hears of key changes. */
export type SharedHosted = {
  meter: MeterPort;
  rate: RatePort;
  /** Calls `onChange` when integrators or keys change anywhere; resolves with the stop function. */
  watch(onChange: () => void): Promise<() => Promise<void>>;
};

/** Counters of one process: the meter restored from the snapshot and the journal, the rate limit in memory. */
async function localCounters(store: IntegratorStore, journal: Journal, now: () => Date) {
  const tail: JournalTail = (visit, options) => journal.replay(visit, options);
  const meter = createHostedMeter({ now });
  await compactUsage(store, tail);
  await loadMeter(store, meter);
  const rate = createRateLimiter({
    limit: HOSTED.ratePerMinute,
    windowSeconds: 60,
    now: () => now().getTime(),
  });
  return {
    tail,
    meter: meterPort(meter),
    rate: ratePort(rate),
    attachment: (use: HostedUse, keyId: string): unknown => hostedUseRecord(use, keyId),
    record: (use: HostedUse, keyId: string) => recordHostedUse(journal, use, keyId),
  };
}

/** What {@link createHosted} opens hosted mode over. */
export type HostedParts = {
  store: IntegratorStore;
  journal: Journal;
  now: () => Date;
  signer: () => Signer;
  payTo: string;
  baseUrl: string;
  invoicesDir: string;
  /** Draws invoices' pay-link tokens. */
  random: (n: number) => Uint8Array;
  shared?: SharedHosted;
  /** The hosted watch-months an invoice run bills (`WatchStore.watchMonths`). */
  watchMonths?: (startMs: number, endMs: number) => Promise<Map<string, number>>;
};

/** Opens hosted mode over its store and the service journal; restores this month's usage (unless `shared`). */
export async function createHosted(parts: HostedParts): Promise<Hosted> {
  const { store, journal, now, shared } = parts;
  const counters = shared
    ? { ...shared, tail: noJournal, attachment: () => null, record: async () => {} }
    : await localCounters(store, journal, now);
  const { tail } = counters;
  const callers = createCallerBook(store);
  // Embedded: the snapshot trails the journal by at most a minute, so a restart after a crash replays little.
  // Shared: keys are reloaded every minute too, in case a change notice was missed (a dropped connection).
  const timer = setInterval(() => {
    (shared ? callers.reload() : compactUsage(store, tail)).catch((error: unknown) =>
      console.error('[spotcheck] [hosted] periodic work failed', error),
    );
  }, 60_000);
  timer.unref();
  await callers.reload();
  const unwatch = shared
    ? await shared.watch(() => {
        callers
          .reload()
          .catch((error: unknown) => console.error('[spotcheck] [hosted] keys not reloaded', error));
      })
    : null;

  return {
    store,
    invoicesDir: parts.invoicesDir,
    payTo: parts.payTo,
    meter: counters.meter,
    rate: counters.rate,
    authenticate: callers.authenticate,
    attachment: counters.attachment,
    record: counters.record,
    async apply(content) {
      const result = await applyOperation(parts, tail, content);
      await callers.reload();
      return JSON.stringify(result, null, 2);
    },
    compact: () => compactUsage(store, tail),
    async close() {
      clearInterval(timer);
      await unwatch?.();
      await compactUsage(store, tail);
      await store.close();
    },
  };
}

/** The keys in memory, with their integrators: a hosted call never waits for the database to authenticate. */
function createCallerBook(
  store: IntegratorStore,
): Pick<Hosted, 'authenticate'> & { reload(): Promise<void> } {
  let callers = new Map<string, HostedCaller>();
  // A hash of a fixed text: an unknown key id costs the same hash and comparison as a known one.
  const decoy = hashSecret('no such key');
  return {
    async reload() {
      const integrators = new Map((await store.integrators()).map((row) => [row.id, row]));
      const next = new Map<string, HostedCaller>();
      for (const key of await store.keys()) {
        const integrator = integrators.get(key.integrator);
        if (integrator) next.set(key.id, { key, integrator });
      }
      callers = next;
    },
    authenticate(presented) {
      const parsed = parseServiceKey(presented);
      if (parsed === null) return { ok: false, message: 'The service key is not valid.' };
      const caller = callers.get(parsed.id);
      const matches = sameHash(hashSecret(parsed.secret), caller?.key.secretHash ?? decoy);
      if (!caller || !matches) return { ok: false, message: 'The service key is not valid.' };
      if (caller.key.state !== 'active')
        return { ok: false, message: `The service key is ${caller.key.state}.` };
      return { ok: true, caller };
    },
  };
}

/** Applies an operator operation from the inbox; issuing invoices reads the journal's uses through `tail`. */
async function applyOperation(parts: HostedParts, tail: JournalTail, content: string) {
  const { store } = parts;
  const op = parseOp(JSON.parse(content));
  return applyOp(store, op, (month) =>
    issueInvoices({
      store,
      tail,
      month,
      now: parts.now(),
      signer: parts.signer(),
      dir: parts.invoicesDir,
      payTo: parts.payTo,
      baseUrl: parts.baseUrl,
      random: parts.random,
      ...(parts.watchMonths ? { watchMonths: parts.watchMonths } : {}),
    }),
  );
}

/** With a shared store the use is counted when reserved: no journal records to fold or invoice from. */
const noJournal: JournalTail = async () => {};

/** The hosted caller of a request that must present a valid integrator key; 401 otherwise (docs/api.md §5.5). */
export function requireHostedCaller(
  event: H3Event,
  hosted: Hosted | null,
): { hosted: Hosted; caller: HostedCaller } {
  const credential = readCredential(event.req.headers);
  if (credential.kind === 'none')
    throw apiError(401, 'missing_key', 'Send the integrator key as Authorization: Bearer.');
  if (credential.kind === 'malformed') throw apiError(401, 'bad_key', credential.message);
  const result = hosted?.authenticate(credential.key) ?? null;
  if (hosted === null || result === null) throw apiError(401, 'bad_key', 'The service key is not valid.');
  if (!result.ok) throw apiError(401, 'bad_key', result.message);
  return { hosted, caller: result.caller };
}
