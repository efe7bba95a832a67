/**
 * The prober's limit of requests in flight per server (docs/decisions.md "The probe"). The crawl's 3 per host count
 * host names, and wildcard DNS, or any number of domains pointed at one address, gives one server as many names as
 * a listing likes: a server is the address the prober connects to, whatever name led there. The key is the checked
 * address with its port (one listening socket; a machine serving several ports, like a test fleet on 127.0.0.1,
 * counts per port), with the IPv4 forms that reach one IPv4 server (IPv4-mapped, NAT64, 6to4) folded into it.
 *
 * Slots are handed over first come, first served; an entry exists only while its address has probes in flight or
 * waiting, so memory follows the probes, not the addresses ever seen.
 */
import { parseIp } from '../../core/ssrf.ts';

/**
 * Most probes in flight to one address and port, over every name and every caller of one prober: well above the
 * crawl's 3 per host, because a CDN's or a platform's few addresses front many unrelated sellers (a crawl reaches
 * hundreds of hosts through one of them), and far below the hundreds a wildcard name could send one small server.
 */
export const MAX_IN_FLIGHT_PER_ADDRESS = 32;

/** Frees a slot taken (idempotent). */
export type ReleaseSlot = () => void;

/** The slots of every address of one prober. */
export type AddressSlots = {
  /** A slot at once, or null when the address is full. */
  tryTake(key: string): ReleaseSlot | null;
  /** Waits for a slot; rejects with `signal.reason` when the signal aborts first (the slot is then not taken). */
  take(key: string, signal: AbortSignal): Promise<ReleaseSlot>;
};

type Entry = { inFlight: number; waiting: Array<(release: ReleaseSlot) => void> };

/**
 * Creates the slots, `max` per key.
 * @example const slots = createAddressSlots(32); const release = slots.tryTake(serverKey('203.0.113.7', 443)) ?? await slots.take(key, signal)
 */
export function createAddressSlots(max: number): AddressSlots {
  const most = Math.max(1, Math.floor(max));
  const entries = new Map<string, Entry>();

  const releaser = (key: string, entry: Entry): ReleaseSlot => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = entry.waiting.shift();
      // The slot goes straight to the next in line, so no newcomer can take it in between.
      if (next !== undefined) next(releaser(key, entry));
      else if (--entry.inFlight === 0) entries.delete(key);
    };
  };

  const tryTake = (key: string): ReleaseSlot | null => {
    let entry = entries.get(key);
    if (entry === undefined) {
      entry = { inFlight: 0, waiting: [] };
      entries.set(key, entry);
    }
    if (entry.inFlight >= most) return null;
    entry.inFlight++;
    return releaser(key, entry);
  };

  const take = (key: string, signal: AbortSignal): Promise<ReleaseSlot> => {
    const now = tryTake(key);
    if (now !== null) return Promise.resolve(now);
    if (signal.aborted) return Promise.reject(signal.reason);
    const entry = entries.get(key) as Entry;
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const onAbort = () => {
        const at = entry.waiting.indexOf(grant);
        if (at >= 0) entry.waiting.splice(at, 1);
        reject(signal.reason);
      };
      const grant = (release: ReleaseSlot) => {
        signal.removeEventListener('abort', onAbort);
        resolve(release);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      entry.waiting.push(grant);
    });
  };

  return { tryTake, take };
}

/**
 * The key of one server: its address, IPv4 forms folded and IPv6 in one spelling, and its port.
 * @example serverKey('::ffff:203.0.113.7', 443) === serverKey('203.0.113.7', 443) // true
 */
export function serverKey(address: string, port: number): string {
  const ip = parseIp(address);
  if (ip === null) return `${address}|${port}`;
  const b = ip.bytes;
  const v4 =
    ip.family === 4
      ? b
      : isPrefix(b, MAPPED) || isPrefix(b, NAT64)
        ? b.slice(12)
        : b[0] === 0x20 && b[1] === 0x02
          ? b.slice(2, 6)
          : null;
  if (v4 !== null) return `${v4.join('.')}|${port}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  return `${groups.join(':')}|${port}`;
}

/** `::ffff:0:0/96` and `64:ff9b::/96`: the IPv4 address is the last 32 bits. */
const MAPPED = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const NAT64 = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];

function isPrefix(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}
