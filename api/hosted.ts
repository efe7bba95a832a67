/**
 * Hosted mode in the server (spec §5.4, §8): the integrator store, the keys in memory (a hosted call never waits
 * for the database), the usage meter restored from the snapshot and the journal, the per-key rate limit, and the
 * operator's operations arriving through the inbox. Routes meet it through the access gate.
 */
import type { H3Event } from 'h3';
import { HOSTED } from '../core/hosted.ts';
import { createHostedMeter, type HostedMeter, type HostedUse } from '../core/hosted-meter.ts';
import { createRateLimiter, type RateLimiter } from '../core/rate-limit.ts';
import type { Signer } from '../core/receipt.ts';
import { hashSecret, parseServiceKey, sameHash } from '../core/service-key.ts';
import { compactUsage, loadMeter, recordHostedUse } from '../io/hosted-usage.ts';
import { applyOp, parseOp } from '../io/integrator-ops.ts';
import type { IntegratorRow, IntegratorStore, KeyRow } from '../io/integrator-store.ts';
import { issueInvoices } from '../io/invoices.ts';
import type { Journal } from '../io/journal.ts';
import { apiError } from './errors.ts';

/** Who a valid hosted key belongs to. */
export type HostedCaller = { key: KeyRow; integrator: IntegratorRow };

export type Hosted = {
  store: IntegratorStore;
  /** Where invoice files are written (`DATA_DIR/invoices`). */
  invoicesDir: string;
  meter: HostedMeter;
  rate: RateLimiter;
  /** The caller of a presented key, or why it is refused (every refusal is a 401, spec §5.5). */
  authenticate(presented: string): { ok: true; caller: HostedCaller } | { ok: false; message: string };
  /** Durably records a hosted use before its answer leaves. */
  record(use: HostedUse, keyId: string, receiptId: string | null): Promise<void>;
  /** Applies an operator operation handed over through the inbox; returns the note to print. */
  apply(content: string): Promise<string>;
  /** Folds the journal's hosted uses into the store's snapshot. */
  compact(): Promise<number>;
  close(): Promise<void>;
};

/** Opens hosted mode over its store and the service journal; restores this month's usage. */
export async function createHosted(parts: {
  store: IntegratorStore;
  journal: Journal;
  now: () => Date;
  signer: () => Signer;
  payTo: string;
  baseUrl: string;
  invoicesDir: string;
}): Promise<Hosted> {
  const { store, journal, now } = parts;
  const tail = (visit: Parameters<Journal['replay']>[0], options: { since?: string }) =>
    journal.replay(visit, options);
  const meter = createHostedMeter({ now });
  await compactUsage(store, tail);
  await loadMeter(store, meter);
  // The snapshot trails the journal by at most a minute, so a restart after a crash replays little.
  const timer = setInterval(() => {
    compactUsage(store, tail).catch((error: unknown) =>
      console.error('[spotcheck] [hosted] usage snapshot not written', error),
    );
  }, 60_000);
  timer.unref();

  let callers = new Map<string, HostedCaller>();
  const reload = async () => {
    const integrators = new Map((await store.integrators()).map((row) => [row.id, row]));
    const next = new Map<string, HostedCaller>();
    for (const key of await store.keys()) {
      const integrator = integrators.get(key.integrator);
      if (integrator) next.set(key.id, { key, integrator });
    }
    callers = next;
  };
  await reload();
  // A hash of a fixed text: an unknown key id costs the same hash and comparison as a known one.
  const decoy = hashSecret('no such key');

  return {
    store,
    invoicesDir: parts.invoicesDir,
    meter,
    rate: createRateLimiter({ limit: HOSTED.ratePerMinute, windowSeconds: 60, now: () => now().getTime() }),
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
    record: (use, keyId, receiptId) => recordHostedUse(journal, use, keyId, receiptId),
    async apply(content) {
      const op = parseOp(JSON.parse(content));
      const result = await applyOp(store, op, (month) =>
        issueInvoices({
          store,
          tail,
          month,
          now: now(),
          signer: parts.signer(),
          dir: parts.invoicesDir,
          payTo: parts.payTo,
          baseUrl: parts.baseUrl,
        }),
      );
      await reload();
      return JSON.stringify(result, null, 2);
    },
    compact: () => compactUsage(store, tail),
    async close() {
      clearInterval(timer);
      await compactUsage(store, tail);
      await store.close();
    },
  };
}

/** The key a request presents (`x-service-key`, else `Authorization: Bearer`), null when it presents none. */
export function presentedKey(event: H3Event): string | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(event.req.headers.get('authorization') ?? '')?.[1];
  return event.req.headers.get('x-service-key') ?? bearer ?? null;
}

/** The hosted caller of a request that must present a valid integrator key; 401 otherwise (spec §5.5). */
export function requireHostedCaller(
  event: H3Event,
  hosted: Hosted | null,
): { hosted: Hosted; caller: HostedCaller } {
  const presented = presentedKey(event);
  if (presented === null)
    throw apiError(401, 'missing_key', 'Send the integrator key as Authorization: Bearer.');
  const result = hosted?.authenticate(presented) ?? null;
  if (hosted === null || result === null) throw apiError(401, 'bad_key', 'The service key is not valid.');
  if (!result.ok) throw apiError(401, 'bad_key', result.message);
  return { hosted, caller: result.caller };
}
