/**
 * Sellers that misbehave below the x402 layer: a black hole, a reset, redirect chains, a huge body and a body
 * that drips. They cost a careless prober time or memory; every timer and stream here stops when its socket
 * closes so the fleet can always be shut down.
 */
import type { RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BASE, BASE_USDC_TOKEN } from './constants.ts';
import type { SellerOptions, SellerSpec } from './types.ts';
import { base64Json, requestUrl, sendV2, v2Accept, v2Required } from './wire.ts';

/** Bytes `huge-body` streams after its valid header: 20 MiB. */
export const HUGE_BODY_BYTES = 20 * 1024 * 1024;
/** `slow-drip` sends one body byte per second for this many seconds. */
export const DRIP_SECONDS = 30;

const REDIRECT_STATUSES = [302, 301, 307, 308] as const;

/**
 * `hops` redirects, then an honest 402. The first Location is absolute, the rest root-relative, so a prober
 * must resolve both forms; statuses cycle through 302, 301, 307 and 308.
 */
function redirectChain(base: string, hops: number): (ctx: SellerOptions) => RequestListener {
  return ({ payTo }) =>
    (req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const hop = path === base ? 0 : Number(path.slice(base.length + 1));
      if (!Number.isInteger(hop) || hop < 0 || hop > hops) {
        res.writeHead(404, { 'content-length': 0 }).end();
        return;
      }
      if (hop === hops) {
        sendV2(res, v2Required(requestUrl(req), [v2Accept(BASE, BASE_USDC_TOKEN, payTo)]));
        return;
      }
      const next = `${base}/${hop + 1}`;
      const location = hop === 0 ? `http://${req.headers.host ?? 'localhost'}${next}` : next;
      res
        .writeHead(REDIRECT_STATUSES[hop % REDIRECT_STATUSES.length]!, { location, 'content-length': 0 })
        .end();
    };
}

/** Headers of a valid v2 402, sent before a body that is the actual trap. */
function trapHeaders(url: string, payTo: string) {
  return {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'payment-required': base64Json(v2Required(url, [v2Accept(BASE, BASE_USDC_TOKEN, payTo)])),
  };
}

/** Streams `total` bytes of JSON-looking filler, honouring back-pressure, until done or the client leaves. */
function streamFiller(res: ServerResponse, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const pump = (): void => {
    while (sent < total && !res.destroyed) {
      const size = Math.min(chunk.length, total - sent);
      sent += size;
      const more = res.write(size === chunk.length ? chunk : chunk.subarray(0, size));
      if (sent >= total) {
        res.end();
        return;
      }
      if (!more) {
        res.once('drain', pump);
        return;
      }
    }
  };
  res.write('{"padding":"');
  pump();
}

/** The transport-level sellers, by fleet name. */
export const transport = {
  // Below HTTP: the TCP connection is accepted and read, but nothing is ever written back.
  hang: () => ({ kind: 'net', path: '/hang', onSocket: (socket: Socket) => socket.resume() }),

  // A TCP RST as soon as the request has arrived.
  reset: () => ({ kind: 'http', path: '/reset', listener: (req) => req.socket.resetAndDestroy() }),

  'redirect-chain': (ctx) => ({
    kind: 'http',
    path: '/redirect-chain',
    listener: redirectChain('/redirect-chain', 3)(ctx),
  }),

  'redirect-too-long': (ctx) => ({
    kind: 'http',
    path: '/redirect-too-long',
    listener: redirectChain('/redirect-too-long', 4)(ctx),
  }),

  // A public-looking seller that bounces the prober into a private network.
  'redirect-private': () => ({
    kind: 'http',
    path: '/redirect-private',
    listener: (_req, res) => res.writeHead(302, { location: 'http://10.0.0.1/', 'content-length': 0 }).end(),
  }),

  // Chunked, no content-length: the prober cannot know the size up front and must cap what it reads.
  'huge-body': ({ payTo }) => ({
    kind: 'http',
    path: '/huge-body',
    listener: (req, res) => {
      res.writeHead(402, trapHeaders(requestUrl(req), payTo));
      streamFiller(res, HUGE_BODY_BYTES);
    },
  }),

  // Status and header arrive at once; the body then takes DRIP_SECONDS to finish.
  'slow-drip': ({ payTo }) => ({
    kind: 'http',
    path: '/slow-drip',
    listener: (req, res) => {
      res.writeHead(402, trapHeaders(requestUrl(req), payTo));
      res.flushHeaders();
      let left = DRIP_SECONDS;
      const timer = setInterval(() => {
        left -= 1;
        if (left > 0) res.write(' ');
        else {
          clearInterval(timer);
          res.end('{}');
        }
      }, 1000);
      timer.unref();
      res.on('close', () => clearInterval(timer));
    },
  }),
} satisfies Record<string, (ctx: SellerOptions) => SellerSpec>;

export type TransportName = keyof typeof transport;
