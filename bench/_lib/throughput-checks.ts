/**
 * What the throughput bench checks of the answers it gets: a cached check's receipt id, the receipt the floor signs,
 * and a sample of receipt files verified with the auditors' verifier.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyReceipt } from '../../verify/verify.ts';
import type { Timed } from './http.ts';

const VERIFY_SAMPLE = 50;

/** The receipt id of a correct cached-check answer, else null. */
export function receiptOf(answer: Timed): string | null {
  if (answer.status !== 200) return null;
  const body = JSON.parse(answer.body) as {
    receipt_id?: unknown;
    verdict?: unknown;
    probe?: { cached?: unknown };
  };
  if (body.verdict !== 'pay' || body.probe?.cached !== true || typeof body.receipt_id !== 'string')
    return null;
  return body.receipt_id;
}

/** A real check receipt of the service without its signature: what the floor signs, the same size. */
export async function floorReceipt(base: string, id: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/v1/receipts/${id}`);
  if (res.status !== 200) throw new Error(`bench: receipt ${id} answered ${res.status}`);
  const { signature: _s, kid: _k, ...unsigned } = (await res.json()) as Record<string, unknown>;
  return unsigned;
}

/** Verifies up to {@link VERIFY_SAMPLE} receipt files, spread over the run, with the auditors' verifier. */
export async function verifySample(
  dir: string,
  ids: string[],
  jwks: unknown,
): Promise<{ checked: number; ok: number }> {
  const step = Math.max(1, Math.floor(ids.length / VERIFY_SAMPLE));
  let checked = 0;
  let ok = 0;
  for (let i = 0; i < ids.length && checked < VERIFY_SAMPLE; i += step) {
    const receipt: unknown = JSON.parse(await readFile(join(dir, `${ids[i]}.json`), 'utf8'));
    checked++;
    if ((await verifyReceipt(receipt, jwks)).ok) ok++;
  }
  return { checked, ok };
}

/** Waits (at most 120 s) until `dir` holds `count` receipt files; returns how long that took in ms. */
export async function waitForFiles(dir: string, count: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 120_000) {
    const files = (await readdir(dir)).filter((name) => name.endsWith('.json')).length;
    if (files >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return performance.now() - started;
}
