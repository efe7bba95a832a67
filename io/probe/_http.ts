/**
 * One pinned HTTP/1.1 exchange for the prober: connect to an address that was already checked, send one
 * request, read status, headers and a capped body, and destroy the socket, or, for a GET read to its end, hand it
 * back to the prober's pool for the next probe of the same address. Internal to `io/probe/prober.ts`.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import type { HttpMethod } from '../../core/model.ts';

/** Everything needed to open one pinned connection; `address` is the IP the SSRF gate approved. */
export type ConnectTarget = {
  protocol: 'http:' | 'https:';
  address: string;
  family: 4 | 6;
  port: number;
  /** TLS SNI and certificate name: the URL's host name, or null for an IP-literal URL. */
  servername: string | null;
  method: HttpMethod;
  path: string;
  /** Request headers, `host` included (the URL's host[:port], not the pinned address). */
  headers: Record<string, string>;
  maxHeaderSize: number;
  /**
   * The connection may come from the prober's pool and go back to it (a GET of a prober with `reuseConnections`).
   * Node keys the pool by the pinned address, port and TLS name, so a pooled socket only ever carries a probe to an
   * address its own gate check approved.
   */
  reuse: boolean;
};

/** Opens the request (not yet ended). The seam tests use to prove no connection was attempted. */
export type Connect = (target: ConnectTarget) => ClientRequest;

/** What one exchange produced: status, lower-cased joined headers, and the capped body. */
export type RawExchange = {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
};

/**
 * A pooled connection failed before any answer came back: the seller had closed it as the request went out. An
 * idempotent request may then be sent again on a new connection (RFC 9112 §9.3.1); the prober does so once.
 */
export class StaleConnectionError extends Error {
  constructor(cause: unknown) {
    super('[prober] a pooled connection was closed before it answered', { cause });
    this.name = 'StaleConnectionError';
  }
}

/** Where an exchange was when it stopped; names the `timeout_*` detail. */
export type Stage = { name: 'dns' | 'queue' | 'connect' | 'response' | 'body' };

/**
 * A finished connection waits in the pool at most 1 s (shorter than the idle limits servers commonly set, so the
 * seller rarely closes one as it is reused), and at most 3 per address (a crawl has no more in flight at a host).
 */
const POOL_OPTIONS = { keepAlive: true, maxFreeSockets: 3, timeout: 1000 };

/**
 * Idle connections a pool keeps over every address by default: past it a finished connection is closed. Checks of
 * many different sellers in a second would otherwise hold a descriptor each for that second.
 */
export const MAX_IDLE_CONNECTIONS = 256;

/**
 * Builds the default {@link Connect}: `http(s).request` to the pinned IP. A target without `reuse` never goes
 * through an agent (no keep-alive, no pooled socket that a later probe could inherit); one with `reuse` goes
 * through this connect's own keep-alive pool, created on first use. Extra TLS options (a test CA) may be given;
 * `maxIdle` replaces {@link MAX_IDLE_CONNECTIONS}.
 */
export function createConnect(tls: { ca?: string | Buffer } = {}, maxIdle = MAX_IDLE_CONNECTIONS): Connect {
  let pool: Record<ConnectTarget['protocol'], http.Agent> | null = null;
  const pooled = (protocol: ConnectTarget['protocol']) => {
    pool ??= {
      'http:': capped(new http.Agent(POOL_OPTIONS), maxIdle),
      'https:': capped(new https.Agent(POOL_OPTIONS), maxIdle),
    };
    return pool[protocol];
  };
  return (t) => {
    const agent = t.reuse ? pooled(t.protocol) : false;
    const common = {
      host: t.address,
      family: t.family,
      port: t.port,
      method: t.method,
      path: t.path,
      headers: t.headers,
      agent,
      maxHeaderSize: t.maxHeaderSize,
      // `host` is an IP literal, so Node never resolves; this makes any attempt to resolve fail loudly.
      lookup: refuseLookup,
    };
    if (t.protocol === 'http:') return http.request(common);
    return https.request({
      ...common,
      ...tls,
      ...(t.servername === null ? {} : { servername: t.servername }),
    });
  };
}

/**
 * `agent`, keeping a finished connection only while it holds fewer than `maxIdle` idle ones over every address. The
 * idle ones are counted as they enter and leave the pool (taken by a request, or closed), not summed over every
 * address at each release: a crawl's pool spans hundreds of addresses, and that sum cost about 9 % of its main thread.
 */
function capped<A extends http.Agent>(agent: A, maxIdle: number): A {
  const idle = new Set<Duplex>();
  const watched = new WeakSet<Duplex>();
  const keep = agent.keepSocketAlive.bind(agent) as (socket: Duplex) => boolean;
  const reuse = agent.reuseSocket.bind(agent);
  // Node calls this last, once every other rule has let the connection into the pool: true means it goes in.
  agent.keepSocketAlive = (socket: Duplex) => {
    if (idle.size >= maxIdle || !keep(socket)) return false;
    if (!watched.has(socket)) {
      watched.add(socket);
      socket.once('close', () => idle.delete(socket));
    }
    idle.add(socket);
    return true;
  };
  agent.reuseSocket = (socket, request) => {
    idle.delete(socket);
    reuse(socket, request);
  };
  return agent;
}

const refuseLookup: LookupFunction = (hostname, _options, callback) => {
  const err: NodeJS.ErrnoException = new Error(`[prober] refused to resolve ${hostname} after the gate`);
  err.code = 'ERR_PINNED_LOOKUP';
  callback(err, '', 4);
};

/**
 * Runs one exchange. Resolves once headers are in and the body is read (or skipped, or cut at `maxBodyBytes`);
 * rejects on a connection error before the headers, or with `signal.reason` when the budget runs out.
 * A body cut short by the peer after the headers resolves as `truncated`: the status and headers were real.
 */
export function exchange(
  connect: Connect,
  target: ConnectTarget,
  body: string | null,
  opts: {
    signal: AbortSignal;
    maxBodyBytes: number;
    skipBody: (status: number, headers: Record<string, string>) => boolean;
    stage: Stage;
  },
): Promise<RawExchange> {
  const { signal, maxBodyBytes, skipBody, stage } = opts;
  return new Promise<RawExchange>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    let settled = false;
    let head: { status: number; headers: Record<string, string> } | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let req: ClientRequest | null = null;

    // `keep`: the answer was read to its end, so a pooled socket may serve the next probe of its address.
    const settle = (act: () => void, keep = false) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      act();
      if (!(keep && target.reuse)) req?.destroy();
    };
    const partial = (truncated: boolean, keep = false) =>
      settle(() => resolve({ ...head!, body: Buffer.concat(chunks, size), truncated }), keep);
    const onAbort = () => settle(() => reject(signal.reason));

    stage.name = 'connect';
    try {
      req = connect(target);
    } catch (err) {
      return reject(err);
    }
    signal.addEventListener('abort', onAbort, { once: true });
    // Listeners stay attached after settling: a late 'error' without a listener would crash the process.
    req.on('error', (err) => {
      if (head !== null) return partial(true);
      settle(() => reject(req?.reusedSocket ? new StaleConnectionError(err) : err));
    });
    req.on('socket', (socket) => {
      // A pooled socket is connected already: the wait from here on is for the answer.
      if (req?.reusedSocket) {
        stage.name = 'response';
        return;
      }
      socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
        if (stage.name === 'connect') stage.name = 'response';
      });
    });
    req.on('response', (res: IncomingMessage) => {
      res.on('error', () => partial(true));
      head = { status: res.statusCode ?? 0, headers: joinHeaders(res.rawHeaders) };
      if (skipBody(head.status, head.headers)) return partial(false);
      stage.name = 'body';
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = maxBodyBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size += room;
          return partial(true);
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => partial(false, true));
      res.on('close', () => partial(!res.complete));
    });
    req.end(body ?? undefined);
  });
}

/** Lower-cased header names; repeated headers joined with ', ' (RFC 9110 §5.3). Own properties only. */
export function joinHeaders(raw: readonly string[]): Record<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const prev = map.get(name);
    map.set(name, prev === undefined ? raw[i + 1]! : `${prev}, ${raw[i + 1]!}`);
  }
  // fromEntries defines own data properties, so a header named `__proto__` cannot reach the prototype.
  return Object.fromEntries(map);
}

const DNS_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'ENODATA',
  'ESERVFAIL',
  'EREFUSED',
]);

/** Connection errors raised before any byte was sent: trying the next checked address is safe. */
export function isConnectFailure(err: unknown): boolean {
  const code = errorCode(err);
  return ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT'].includes(
    code ?? '',
  );
}

/** A stable snake_case detail for a failed exchange or lookup (the `unreachable` outcome's `detail`). */
export function classifyError(err: unknown): string {
  const code = errorCode(err);
  if (code === undefined) return 'network_error';
  if (DNS_CODES.has(code)) return `dns_${code.toLowerCase()}`;
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host_unreachable';
  if (code === 'HPE_HEADER_OVERFLOW') return 'header_overflow';
  if (code.startsWith('HPE_')) return `http_parse_error:${code}`;
  if (/^(?:ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|EPROTO$)/.test(code))
    return `tls_error:${code}`;
  return `network_error:${code}`;
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}
