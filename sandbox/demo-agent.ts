/**
 * The demo's keyless agent: a `fetch` whose connections leave from another loopback address (127.0.0.2), so the
 * free checks it spends are counted for that address, not for the visitor who opens the demo's URLs from
 * 127.0.0.1 afterwards (docs/demo.md, step 5). Node's `fetch` cannot choose its local address without undici's
 * dispatcher, whose versions must match Node's own; `node:http` can, so this is the few lines the tour needs.
 */
import { request } from 'node:http';

/** The address the demo's keyless agent calls from: loopback, but not the visitor's 127.0.0.1. */
export const AGENT_ADDRESS = '127.0.0.2';

/** A `fetch` for `http:` URLs whose connections leave from `localAddress`. */
export function fetchFrom(localAddress: string): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    const body = req.body === null ? null : Buffer.from(await req.arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const outgoing = request(
        req.url,
        { method: req.method, headers: Object.fromEntries(req.headers), localAddress },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(res.headers))
              for (const one of [value ?? []].flat()) headers.append(name, one);
            const status = res.statusCode ?? 500;
            const empty = status === 204 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers }));
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body ?? undefined);
    });
  };
}

/**
 * The tour's keyless agent: {@link fetchFrom} {@link AGENT_ADDRESS} when this system routes it (Linux routes all of
 * 127.0.0.0/8 to loopback; macOS only 127.0.0.1 unless aliased), else the plain `fetch`, with `address` null so the
 * tour can say that the visitor's free checks are the ones it spends.
 */
export async function keylessAgent(
  serviceUrl: string,
): Promise<{ fetch: typeof fetch; address: string | null }> {
  const agent = fetchFrom(AGENT_ADDRESS);
  try {
    await (await agent(`${serviceUrl}/healthz`)).arrayBuffer();
    return { fetch: agent, address: AGENT_ADDRESS };
  } catch {
    return { fetch, address: null };
  }
}
