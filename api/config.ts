/**
 * Configuration, read once from the environment by the entry file (design.md "Names the outside world relies on").
 * Every variable is optional; the defaults are the embedded ones `npm start` runs with.
 */
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { type Cidr, parseCidrList } from '../core/ssrf.ts';

export type Config = {
  host: string;
  port: number;
  dataDir: string;
  /** Public origin used in receipt URLs and badge snippets, without a trailing slash. */
  baseUrl: string;
  trustProxy: boolean;
  /** Peers whose `X-Forwarded-For` is honoured when `trustProxy` is on: the proxy's own addresses. */
  trustedProxies: Cidr[];
  /** Ranges exempted from the SSRF gate: for local testing and the demo only. */
  probeAllowCidrs: string;
  facilitatorUrl: string | null;
  rpcUrls: string[];
  /** The `payTo` of the service's own 402s; null means "use the wallet generated under DATA_DIR". */
  serviceWallet: `0x${string}` | null;
  signingKeyFile: string | null;
  /** Exempt keys (`name:secret`, comma-separated); `self` names the service's own self-test client. */
  exemptKeys: Array<{ name: string; secret: string }>;
};

const Address = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x address of 40 hex digits'));
const Port = v.pipe(v.string(), v.regex(/^\d{1,5}$/), v.transform(Number), v.minValue(0), v.maxValue(65535));
const Flag = v.picklist(['0', '1', 'true', 'false', '']);

const Env = v.object({
  HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'),
  PORT: v.optional(Port, '8402'),
  DATA_DIR: v.optional(v.pipe(v.string(), v.minLength(1)), './data/runtime'),
  BASE_URL: v.optional(v.pipe(v.string(), v.url())),
  TRUST_PROXY: v.optional(Flag, ''),
  TRUSTED_PROXIES: v.optional(v.string(), '127.0.0.1/8,::1'),
  PROBE_ALLOW_CIDRS: v.optional(v.string(), ''),
  FACILITATOR_URL: v.optional(v.pipe(v.string(), v.url())),
  RPC_URLS: v.optional(v.string(), ''),
  SERVICE_WALLET: v.optional(Address),
  SIGNING_KEY_FILE: v.optional(v.pipe(v.string(), v.minLength(1))),
  EXEMPT_KEYS: v.optional(v.string(), ''),
});

/** Reads and validates the environment; throws a `TypeError` naming the bad variable. */
export function readConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = v.safeParse(Env, present);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const name = issue.path?.map((item) => String(item.key)).join('.') ?? 'environment';
    throw new TypeError(`[spotcheck] invalid ${name}: ${issue.message}`);
  }
  const e = parsed.output;
  const host = e.HOST;
  const port = e.PORT;
  return {
    host,
    port,
    dataDir: resolve(e.DATA_DIR),
    baseUrl: (e.BASE_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, ''),
    trustProxy: e.TRUST_PROXY === '1' || e.TRUST_PROXY === 'true',
    trustedProxies: proxyList(e.TRUSTED_PROXIES),
    probeAllowCidrs: e.PROBE_ALLOW_CIDRS,
    facilitatorUrl: e.FACILITATOR_URL ?? null,
    rpcUrls: splitList(e.RPC_URLS),
    serviceWallet: (e.SERVICE_WALLET as `0x${string}` | undefined) ?? null,
    signingKeyFile: e.SIGNING_KEY_FILE ?? null,
    exemptKeys: splitList(e.EXEMPT_KEYS).map(parseExemptKey),
  };
}

/** Paths under DATA_DIR. */
export function dataPaths(dataDir: string) {
  return {
    database: join(dataDir, 'spotcheck.duckdb'),
    journal: join(dataDir, 'journal'),
    receipts: join(dataDir, 'receipts'),
    keys: join(dataDir, 'keys'),
    inbox: join(dataDir, 'inbox'),
    /** The built public site (`npm run build:site`), served from the same origin as the API. */
    site: join(dataDir, 'site'),
  };
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

function proxyList(text: string): Cidr[] {
  try {
    return parseCidrList(text);
  } catch {
    throw new TypeError('[spotcheck] invalid TRUSTED_PROXIES: comma-separated IPv4/IPv6 addresses or CIDRs');
  }
}

function parseExemptKey(entry: string): { name: string; secret: string } {
  const at = entry.indexOf(':');
  const name = entry.slice(0, at);
  const secret = entry.slice(at + 1);
  if (at < 1 || secret.length < 16) {
    throw new TypeError(
      '[spotcheck] invalid EXEMPT_KEYS: each entry is name:secret with a secret of 16+ characters',
    );
  }
  return { name, secret };
}
