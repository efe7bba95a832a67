/**
 * Random bytes for ids on the request path, drawn from node:crypto 4 KiB at a time: one call into the CSPRNG per
 * 256 receipt ids instead of one per id. The bytes are the same CSPRNG output; a slice is handed out once and never
 * reused (a drained pool is replaced, not refilled, so a caller keeping its slice keeps its bytes).
 */
import { randomBytes } from 'node:crypto';

const POOL_BYTES = 4096;

/**
 * A `random(n)` for `newReceiptId` and the like.
 * @example const random = pooledRandom(); newReceiptId('sc-', random)
 */
export function pooledRandom(): (n: number) => Uint8Array {
  let pool = new Uint8Array(0);
  let offset = 0;
  return (n) => {
    if (n > POOL_BYTES) return randomBytes(n);
    if (offset + n > pool.length) {
      pool = randomBytes(POOL_BYTES);
      offset = 0;
    }
    offset += n;
    return pool.subarray(offset - n, offset);
  };
}
