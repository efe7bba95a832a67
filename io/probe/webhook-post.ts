/**
 * Webhook deliveries through the SSRF gate (CONTRIBUTING.md "SSRF gate"; docs/api.md "Watches"): the receiver's
 * URL passes `checkUrl`, every address its name resolves to passes `checkAddress` (one refused address refuses the
 * delivery), and the POST goes to an address that was checked, on a fresh connection (no pool), with no redirect
 * followed (a 3xx is a failed attempt), within one time budget and reading at most a few KiB of the answer. The
 * gate runs at every delivery, so a name that later resolves to a private address is refused then.
 */
import { type Cidr, checkAddress, checkUrl, literalAddress } from '../../core/ssrf.ts';
import { MAX_URL_LENGTH } from '../../core/url.ts';
import { type Connect, classifyError, createConnect, exchange } from './_http.ts';
import { type Lookup, systemLookup } from './prober.ts';

/** What one delivery attempt came to: the receiver's status, or why nothing was (or could be) delivered. */
export type WebhookResult =
  | { kind: 'status'; status: number }
  | { kind: 'blocked'; detail: string }
  | { kind: 'failed'; detail: string };

/** Sends one webhook. */
export type WebhookPoster = {
  post(url: string, headers: Record<string, string>, body: string): Promise<WebhookResult>;
  /** The gate alone (creation of a watch): null when the URL may receive webhooks, else why not. */
  gate(url: string): Promise<string | null>;
};

/** Options; every side effect has a default. */
export type WebhookPosterOptions = {
  lookup?: Lookup;
  allow?: Cidr[];
  /** The whole attempt: DNS, connect, send, answer (default 10 s). */
  timeoutMs?: number;
  userAgent?: string;
  connect?: Connect;
};

/** Creates the poster. */
export function createWebhookPoster(options: WebhookPosterOptions = {}): WebhookPoster {
  const ctx = {
    lookup: options.lookup ?? systemLookup,
    allow: options.allow ?? [],
    timeoutMs: options.timeoutMs ?? 10_000,
    userAgent: options.userAgent ?? 'Spotcheck-Webhooks/1',
    connect: options.connect ?? createConnect(),
  };
  const gate = async (raw: string): Promise<{ url: URL; addresses: string[] } | string> => {
    if (raw.length > MAX_URL_LENGTH || !URL.canParse(raw)) return 'invalid_url';
    const url = new URL(raw);
    if (url.username !== '' || url.password !== '') return 'userinfo';
    const checked = checkUrl(url, ctx.allow);
    if (!checked.ok) return checked.reason;
    if (checked.address !== null) return { url, addresses: [checked.address] };
    const found = await ctx.lookup(url.hostname).catch(() => []);
    if (found.length === 0) return 'dns_no_address';
    for (const entry of found) {
      const address: unknown = entry?.address;
      if (typeof address !== 'string') return 'unparseable_address';
      const ok = checkAddress(address, ctx.allow);
      if (!ok.ok) return `${ok.reason}:${address}`;
    }
    return { url, addresses: found.map((e) => e.address) };
  };
  return {
    gate: async (raw) => {
      const gated = await gate(raw);
      return typeof gated === 'string' ? gated : null;
    },
    async post(raw, headers, body) {
      const gated = await gate(raw);
      if (typeof gated === 'string') return { kind: 'blocked', detail: gated };
      return send(ctx, gated.url, gated.addresses[0] as string, headers, body);
    },
  };
}

/** One POST to the checked `address`, no redirect followed, the answer's body read to at most 4 KiB. */
async function send(
  ctx: { connect: Connect; timeoutMs: number; userAgent: string },
  url: URL,
  address: string,
  headers: Record<string, string>,
  body: string,
): Promise<WebhookResult> {
  const signal = AbortSignal.timeout(ctx.timeoutMs);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  try {
    const answer = await exchange(
      ctx.connect,
      {
        protocol: url.protocol === 'https:' ? 'https:' : 'http:',
        address,
        family: address.includes(':') ? 6 : 4,
        port,
        servername: literalAddress(url) === null ? url.hostname.replace(/\.$/, '') : null,
        method: 'POST',
        path: `${url.pathname}${url.search}`,
        headers: {
          ...headers,
          host: url.host,
          'user-agent': ctx.userAgent,
          'content-length': String(Buffer.byteLength(body)),
          connection: 'close',
        },
        maxHeaderSize: 16 * 1024,
        reuse: false,
      },
      body,
      { signal, maxBodyBytes: 4096, skipBody: () => false, stage: { name: 'connect' } },
    );
    return { kind: 'status', status: answer.status };
  } catch (error) {
    return { kind: 'failed', detail: signal.aborted ? 'timeout' : classifyError(error) };
  }
}
