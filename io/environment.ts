/**
 * The environment variables the server and the crawl share (README), read and validated in one place:
 * `HOST`, `PORT`, `DATA_DIR`, `BASE_URL`, `PROBE_ALLOW_CIDRS`, `SIGNING_KEY_FILE`. Each entry file reads its own
 * variables on top with {@link readEnv}.
 */
import { resolve } from 'node:path';
import * as v from 'valibot';

const Port = v.pipe(v.string(), v.regex(/^\d{1,5}$/), v.transform(Number), v.minValue(0), v.maxValue(65535));

/** The schema entries of the shared variables, with their defaults. */
export const SHARED_ENV = {
  HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'),
  PORT: v.optional(Port, '8402'),
  DATA_DIR: v.optional(v.pipe(v.string(), v.minLength(1)), './data/runtime'),
  BASE_URL: v.optional(v.pipe(v.string(), v.url())),
  PROBE_ALLOW_CIDRS: v.optional(v.string(), ''),
  SIGNING_KEY_FILE: v.optional(v.pipe(v.string(), v.minLength(1))),
};

/** The shared settings. */
export type SharedConfig = {
  host: string;
  port: number;
  dataDir: string;
  /** Public origin used in receipt URLs and badge snippets, without a trailing slash. */
  baseUrl: string;
  /** Ranges exempted from the SSRF gate: for local testing and the demo only. */
  probeAllowCidrs: string;
  signingKeyFile: string | null;
};

/**
 * Validates the environment against `schema` (unset and empty variables take their defaults); throws a
 * `TypeError` naming the bad variable.
 */
export function readEnv<T extends v.GenericSchema>(
  schema: T,
  env: Record<string, string | undefined>,
): v.InferOutput<T> {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = v.safeParse(schema, present);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const name = issue.path?.map((item) => String(item.key)).join('.') ?? 'environment';
    throw new TypeError(`[spotcheck] invalid ${name}: ${issue.message}`);
  }
  return parsed.output;
}

/** The shared settings from validated variables. */
export function sharedConfigOf(e: v.InferOutput<v.ObjectSchema<typeof SHARED_ENV, undefined>>): SharedConfig {
  const host = e.HOST;
  const port = e.PORT;
  return {
    host,
    port,
    dataDir: resolve(e.DATA_DIR),
    baseUrl: (e.BASE_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, ''),
    probeAllowCidrs: e.PROBE_ALLOW_CIDRS,
    signingKeyFile: e.SIGNING_KEY_FILE ?? null,
  };
}
