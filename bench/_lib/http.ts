/**
 * A minimal timed HTTP client on node:http for the benchmarks (no fetch: its pooling and stream plumbing would
 * be part of every figure). The time runs from the call until the last body byte has arrived.
 */
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One timed exchange. */
export type Timed = { status: number; headers: IncomingHttpHeaders; body: string; ms: number };

/** A keep-alive agent holding at most `sockets` connections. */
export function keepAliveAgent(sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
}

/** GET `url`; `agent: false` opens a fresh connection that is closed afterwards. */
export function timedGet(
  url: string,
  options: { agent: Agent | false; headers?: Record<string, string> },
): Promise<Timed> {
  return timedRequest('GET', url, options);
}

/** POST `body` (JSON text) to `url`, timed like {@link timedGet}. */
export function timedPost(
  url: string,
  body: string,
  options: { agent: Agent | false; headers?: Record<string, string> },
): Promise<Timed> {
  const headers = { 'content-type': 'application/json', ...options.headers };
  return timedRequest('POST', url, { ...options, headers }, body);
}

function timedRequest(
  method: 'GET' | 'POST',
  url: string,
  options: { agent: Agent | false; headers?: Record<string, string> },
  body?: string,
): Promise<Timed> {
  const started = performance.now();
  return new Promise<Timed>((resolve, reject) => {
    const req = request(url, { method, agent: options.agent, headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The URL of a check of `target` on the service at `base`. */
export function checkUrl(base: string, target: string): string {
  return `${base}/v1/products/endpoint-spot-check?${new URLSearchParams({ url: target })}`;
}
