/**
 * Receipts as an auditor meets them: fetched from a running instance and verified against its JWKS with the
 * auditors' verifier (`verify/`), which shares no code with the signer.
 */
import { verifyReceipt } from '../../verify/verify.ts';

/**
 * Fetches each receipt from the service at `base` and verifies it against that service's JWKS; resolves with the ids
 * it does not serve and those that do not verify (both empty when every acknowledged receipt survived).
 */
export async function unservedReceipts(
  base: string,
  ids: string[],
): Promise<{ missing: string[]; invalid: string[] }> {
  const jwks = await (await fetch(`${base}/.well-known/jwks.json`)).json();
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const id of ids) {
    const res = await fetch(`${base}/v1/receipts/${id}`);
    if (res.status !== 200) {
      await res.body?.cancel();
      missing.push(id);
      continue;
    }
    const verdict = await verifyReceipt(await res.json(), jwks);
    if (!verdict.ok) invalid.push(`${id}: ${verdict.reason}`);
  }
  return { missing, invalid };
}
