/**
 * Ports for processes that must be told theirs before they start (anvil, a server child, a PostgreSQL cluster):
 * free when checked, and taken from below the kernel's ephemeral range, so no `listen(0)` and no outgoing loopback
 * connection (whose local port comes from that range) can take one between the check and the start. Two callers
 * can still draw the same port in that window; the draw is random over several thousand ports, so this is rare.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

/** The first port of the kernel's ephemeral range (Linux), or the IANA default elsewhere. */
function ephemeralStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isSafeInteger(low) && low > LOWEST + 1_000) return low;
  } catch {
    // Not Linux: fall through.
  }
  return 49_152;
}

const below = ephemeralStart();

/** A loopback port that was free a moment ago, outside the ephemeral range (see the file's note). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await isFree(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${below} after 50 tries`);
}

/** Whether `port` can be listened on at 127.0.0.1 right now. */
export function isFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}
