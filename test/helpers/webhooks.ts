/**
 * A webhook receiver on loopback for the watch tests, a seller whose wallet a test can switch, and the check a
 * router runs on what it received: the Standard Webhooks `v1a` signature over `${id}.${timestamp}.${body}` and the
 * event's own signature (RFC 8785 without `signature`), both with `@noble/ed25519` and the service's JWKS only.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as ed from '@noble/ed25519';
import { BASE, BASE_USDC_TOKEN } from '../../sandbox/sellers/constants.ts';
import { sendV2, v2Accept, v2Required } from '../../sandbox/sellers/wire.ts';

/** One request the receiver got. */
export type Received = { headers: Record<string, string>; body: string; answered: number };

/** A running receiver: what it got, and the status it answers with (changeable). */
export type Receiver = {
  url: string;
  received: Received[];
  answer: { status: number };
  close(): Promise<void>;
};

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Starts a receiver answering `status` (default 200). */
export async function startReceiver(status = 200): Promise<Receiver> {
  const received: Received[] = [];
  const answer = { status };
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
      );
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8'), answered: answer.status });
      res.writeHead(answer.status, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  return { url: `${server.url}/hook`, received, answer, close: server.close };
}

/**
 * A seller answering an honest v2 402 (USD 0.01 on Base) into `wallet.payTo`, which the test may change; while
 * `health.down` is set it answers 503 instead (a failed probe). `probes` holds the time of every request it got;
 * while `hold.on` is set requests wait unanswered until `release()`.
 */
export async function startSwitchableSeller(payTo: string) {
  const wallet = { payTo };
  const health = { down: false };
  const probes: number[] = [];
  // While `hold.on` is set, requests are kept unanswered (a probe in flight) until `release()` answers them 503.
  const hold = { on: false };
  const held: ServerResponse[] = [];
  const release = () => {
    hold.on = false;
    for (const res of held.splice(0)) {
      if (res.destroyed) continue;
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('released');
    }
  };
  const server = await listen((req, res) => {
    probes.push(Date.now());
    if (hold.on) {
      held.push(res);
      return;
    }
    if (health.down) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down');
      return;
    }
    const url = `http://${req.headers.host}${req.url}`;
    sendV2(res, v2Required(url, [v2Accept(BASE, BASE_USDC_TOKEN, wallet.payTo)], 'A watched resource'));
  });
  return {
    // A path of its own: a later seller of the same file may get a closed one's port, and must not inherit the
    // stored history of that seller's endpoint.
    url: `${server.url}/paid/${randomUUID().slice(0, 8)}`,
    wallet,
    health,
    probes,
    hold,
    release,
    close: async () => {
      release();
      await server.close();
    },
  };
}

/** Verifies a delivery as a receiver would, with the JWKS alone: both signatures; resolves with the event. */
export async function verifyDelivery(
  delivery: Received,
  jwks: { keys: Array<{ kid: string; x: string }> },
): Promise<Record<string, unknown>> {
  const id = delivery.headers['webhook-id'] ?? '';
  const timestamp = delivery.headers['webhook-timestamp'] ?? '';
  const event = JSON.parse(delivery.body) as Record<string, unknown>;
  const key = jwks.keys.find((k) => k.kid === event.kid);
  if (!key) throw new Error(`no key ${String(event.kid)} in the JWKS`);
  const publicKey = Buffer.from(key.x, 'base64url');
  const content = new TextEncoder().encode(`${id}.${timestamp}.${delivery.body}`);
  const signatures = (delivery.headers['webhook-signature'] ?? '').split(' ');
  const valid = await Promise.all(
    signatures
      .filter((s) => s.startsWith('v1a,'))
      .map((s) => ed.verifyAsync(Buffer.from(s.slice(4), 'base64'), content, publicKey)),
  );
  if (!valid.includes(true)) throw new Error('no valid v1a signature');
  return verifySignedEvent(delivery.body, jwks);
}

/**
 * Verifies an event's own signature with the JWKS alone: its text is RFC 8785 of every member but `signature`, with
 * `signature` appended last (as the webhook body and the poll route carry it); resolves with the event.
 */
export async function verifySignedEvent(
  text: string,
  jwks: { keys: Array<{ kid: string; x: string }> },
): Promise<Record<string, unknown>> {
  const event = JSON.parse(text) as Record<string, unknown>;
  const key = jwks.keys.find((k) => k.kid === event.kid);
  if (!key) throw new Error(`no key ${String(event.kid)} in the JWKS`);
  const signed = text.replace(/,"signature":"[A-Za-z0-9_-]+"}$/, '}');
  const own = Buffer.from(String(event.signature), 'base64url');
  if (!(await ed.verifyAsync(own, new TextEncoder().encode(signed), Buffer.from(key.x, 'base64url')))) {
    throw new Error('the event’s own signature does not verify');
  }
  return event;
}
