/**
 * The access gate (docs/architecture.md "Rules of the house": free, paid, hosted, exempt, dry-run). It decides who is asking
 * ({@link resolveAsker}) and takes free-tier quota atomically (`io/quota/port.ts`: in memory before any await, or in one
 * PostgreSQL transaction shared by every instance), so concurrent calls are counted exactly, on one instance or many.
 */
import { timingSafeEqual } from 'node:crypto';
import type { H3Event } from 'h3';
import { clientNetworks } from '../core/client-address.ts';
import type { QuotaKey, Reservation, ReserveResult } from '../core/quota.ts';
import type { QuotaPort } from '../io/quota/port.ts';
import { readCredential } from './credentials.ts';
import { apiError } from './errors.ts';
import type { Hosted, HostedCaller } from './hosted.ts';
import { clientAddress, type Identity, type ProxyTrust } from './identity.ts';

export type ExemptKey = { name: string; secret: string };

export type Gate = ProxyTrust & {
  exemptKeys: ExemptKey[];
  quota: QuotaPort;
  identity: Identity;
};

/**
 * The ceilings of one free bucket per UTC day (docs/decisions.md "Access and quotas"): per client address, per
 * client network (IPv4 /24, IPv6 /64) and per IPv6 /48, so rotating addresses, even across a holder's whole
 * IPv6 assignment, meets a bound.
 */
export type AddressLimits = { perAddress: number; perNetwork: number; perSite: number };

/** A granted free use: what the answer shows and what the receipt records. */
export type FreeGrant = {
  reservation: Reservation;
  perDay: number;
  record: { day: string; keys: Array<[string, string]> };
};

/**
 * Who is asking: the one decision every route and MCP tool starts from.
 * - A presented key (`x-service-key` or `Authorization: Bearer`, read strictly by `api/credentials.ts`): an exempt
 *   key, else an active integrator key where the route takes them (`hosted`), else a 401; a key never falls back to
 *   a free answer (docs/api.md §5.5), nor does a malformed `Authorization` or a live key sent in another header.
 * - A dry run (`mode=dry-run`) is free: a payment sent with it is never taken.
 * - A payment header (`paid`), else the free tier.
 */
export type Asker =
  | { tier: 'exempt'; key: ExemptKey }
  | { tier: 'hosted'; caller: HostedCaller }
  | { tier: 'paid' }
  | { tier: 'free' }
  | { tier: 'dry-run' };

/** Decides who is asking. `hosted` is false on routes that take no integrator keys (they answer 401). */
export function resolveAsker(
  event: H3Event,
  gate: Gate,
  hosted: Hosted | null,
  route: { hosted: boolean; dryRun: boolean },
): Asker {
  const keyed = presentedAsker(event.req.headers, gate, hosted, route.hosted);
  if (keyed !== null) return keyed;
  if (route.dryRun) return { tier: 'dry-run' };
  return hasPayment(event) ? { tier: 'paid' } : { tier: 'free' };
}

/**
 * The asker a request's key makes (exempt, or hosted where `hostedRoute`), null when it presents no key; throws a
 * 401 `bad_key` for a malformed presentation or a key that is neither exempt nor an active integrator key. MCP
 * reads the `/mcp` request's key with it once, for every tool call of that request (`api/mcp/route.ts`).
 */
export function presentedAsker(
  headers: Headers,
  gate: Pick<Gate, 'exemptKeys'>,
  hosted: Hosted | null,
  hostedRoute: boolean,
): Extract<Asker, { tier: 'exempt' | 'hosted' }> | null {
  const credential = readCredential(headers);
  if (credential.kind === 'none') return null;
  if (credential.kind === 'malformed') throw apiError(401, 'bad_key', credential.message);
  const exempt = matchExemptKey(credential.key, gate.exemptKeys);
  if (exempt) return { tier: 'exempt', key: exempt };
  const result = hosted?.authenticate(credential.key) ?? null;
  if (result?.ok && hostedRoute) return { tier: 'hosted', caller: result.caller };
  if (result?.ok) {
    throw apiError(
      401,
      'bad_key',
      'Integrator keys are taken by the check and payment status; this route needs no key.',
    );
  }
  throw apiError(401, 'bad_key', result?.message ?? 'The service key is not valid.');
}

/**
 * Marks an answer made for one caller as never to be cached (`no-store`): it shows the caller's count of the day, a
 * fresh probe or the chain's state now. A hosted caller's answer is `private, no-store`, as a paid one is
 * (`api/x402/_responses.ts`). The 402s and errors are `no-store` already.
 */
export function noStore(event: H3Event, asker: Asker): void {
  event.res.headers.set('cache-control', asker.tier === 'hosted' ? 'private, no-store' : 'no-store');
}

function matchExemptKey(presented: string, keys: ExemptKey[]): ExemptKey | null {
  const given = Buffer.from(presented);
  for (const key of keys) {
    const expected = Buffer.from(key.secret);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return key;
  }
  return null;
}

/** True when the request carries an x402 payment (docs/api.md §5.2: either header). */
export function hasPayment(event: H3Event): boolean {
  return event.req.headers.has('payment-signature') || event.req.headers.has('x-payment');
}

/**
 * Takes one free use of `bucket` for the caller, within the bucket's address, network and /48 ceilings. Null
 * when the day's free uses are gone.
 */
export async function takeFree(
  event: H3Event,
  gate: Gate,
  bucket: string,
  limits: AddressLimits,
): Promise<FreeGrant | null> {
  return grant(await gate.quota.reserve(addressKeys(event, gate, bucket, bucket, limits)), limits.perAddress);
}

/**
 * Takes one dry run for the caller, counted by `ref`, else `client`, else address (docs/api.md §5.6), and within the
 * address, network and /48 ceilings too, so a caller naming a new `ref` for each call still meets a bound.
 */
export async function takeDryRun(
  event: H3Event,
  gate: Gate,
  caller: { ref: string | null; client: string | null },
  limits: AddressLimits & { perCaller: number },
): Promise<FreeGrant | null> {
  const byAddress = addressKeys(event, gate, 'dry_run_ip', 'dry_run', limits);
  const id =
    caller.ref !== null
      ? gate.identity.hash('ref', caller.ref)
      : caller.client !== null
        ? gate.identity.hash('client', caller.client)
        : byAddress[0]!.id;
  const keys: QuotaKey[] = [{ bucket: 'dry_run', id, limit: limits.perCaller }, ...byAddress];
  return grant(await gate.quota.reserve(keys), limits.perCaller);
}

/**
 * The address keys of a call: `addressBucket` by canonical client address, `<bucket>_net` by /24 or /64, and
 * `<bucket>_site` by IPv6 /48. Bucket names are journaled with each use, so they never change.
 */
function addressKeys(
  event: H3Event,
  gate: Gate,
  addressBucket: string,
  bucket: string,
  limits: AddressLimits,
): QuotaKey[] {
  const address = clientAddress(event, gate);
  const { network, site } = clientNetworks(address);
  const keys: QuotaKey[] = [
    { bucket: addressBucket, id: gate.identity.hash('ip', address), limit: limits.perAddress },
    { bucket: `${bucket}_net`, id: gate.identity.hash('net', network), limit: limits.perNetwork },
  ];
  if (site !== null) {
    keys.push({ bucket: `${bucket}_site`, id: gate.identity.hash('site', site), limit: limits.perSite });
  }
  return keys;
}

/**
 * Produces a free answer and adds its `access` block (docs/api.md §2.5: `free_per_day`, `free_used_today`). If no answer
 * can be produced, the unit goes back: no answer, no use.
 */
export async function answerFree<T extends object>(
  grant: FreeGrant,
  produce: () => Promise<T>,
): Promise<T & { access: { tier: 'free'; free_per_day: number; free_used_today: number } }> {
  try {
    const body = await produce();
    return {
      ...body,
      access: { tier: 'free', free_per_day: grant.perDay, free_used_today: grant.reservation.used },
    };
  } catch (error) {
    // A release that fails (the shared quota's database unreachable) costs the caller one unit; the answer's own
    // error is what the caller must see.
    await Promise.resolve()
      .then(() => grant.reservation.release())
      .catch((reason: unknown) => console.error('[spotcheck] [quota] unit not given back', reason));
    throw error;
  }
}

function grant(result: ReserveResult, perDay: number): FreeGrant | null {
  if (!result.ok) return null;
  const { reservation } = result;
  return {
    reservation,
    perDay,
    record: { day: reservation.day, keys: reservation.keys.map((key) => [key.bucket, key.id]) },
  };
}
