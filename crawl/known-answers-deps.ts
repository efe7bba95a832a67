/**
 * The real dependencies of a known-answer run, wired once for the CLI, the demo and the end-to-end tests.
 */
import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import type { Signer } from '../core/receipt.ts';
import { parseCidrList } from '../core/ssrf.ts';
import { createProber } from '../io/probe/prober.ts';
import { runPaths } from '../io/runs/paths.ts';
import { createRunWallets } from '../io/runs/wallet.ts';
import type { KnownAnswerDeps } from './known-answers.ts';
import type { ProgressOut } from './progress.ts';

/**
 * Builds the dependencies: the SSRF-gated prober (`allowCidrs` for local testing only) and the run wallets derived
 * from the configured payer's key (`rpcUrl`: the Base JSON-RPC endpoint the funding transfer is sent through).
 */
export function knownAnswerDeps(options: {
  dataDir: string;
  baseUrl: string;
  allowCidrs: string;
  payerKey: Hex;
  rpcUrl: string | null;
  signer: Signer;
  progressOut: ProgressOut;
  log: (line: string) => void;
}): KnownAnswerDeps {
  return {
    paths: runPaths(options.dataDir, 'known-answers'),
    prober: createProber({ allow: parseCidrList(options.allowCidrs), now: () => new Date() }),
    wallets: createRunWallets({ payerKey: options.payerKey, rpcUrl: options.rpcUrl }),
    signer: options.signer,
    now: () => new Date(),
    random: (size) => randomBytes(size),
    baseUrl: options.baseUrl,
    monotonic: () => performance.now(),
    progressOut: options.progressOut,
    log: options.log,
  };
}
