/**
 * A pass-through HTTP proxy that times every request it forwards: put in front of the sandbox facilitator, it
 * measures the facilitator + chain side of a payment (`/verify`, `/settle`) as the service experiences it, minus
 * the service's own HTTP client. Loopback only.
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** One forwarded request: path, upstream status, and the time from its arrival to the last byte sent back. */
export type Timing = { path: string; status: number; ms: number };

/** A running proxy; `timings` grows with every request and may be cleared by the caller. */
export type TimingProxy = { url: string; timings: Timing[]; close(): Promise<void> };

/** Starts a proxy to `upstream` (an `http://` origin) on a free loopback port. */
export async function startTimingProxy(upstream: string): Promise<TimingProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  const timings: Timing[] = [];
  const server = createServer((req, res) => {
    const started = performance.now();
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        agent,
      },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
        res.on('finish', () =>
          timings.push({
            path: new URL(req.url ?? '/', 'http://proxy').pathname,
            status: upstreamRes.statusCode ?? 0,
            ms: performance.now() - started,
          }),
        );
      },
    );
    forward.on('error', () => {
      res.writeHead(502).end();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    timings,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
