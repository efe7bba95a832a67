/**
 * The receipt file is written after the answer, off the request path. Until it is, GET
 * /v1/receipts/{id} serves the acknowledged receipt from memory; once the writer catches up, the file holds it.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiptFileWriter, type ReceiptFileWriter } from '../../../io/receipts/file-writer.ts';
import { verifyReceipt } from '../../../verify/verify.ts';
import { appFetch, EXEMPT_SECRET, startTestService, type TestService } from '../../helpers/service.ts';

let running: TestService | null = null;
afterEach(async () => {
  await running?.stop();
  running = null;
});

/** Holds every file until `release`, then hands them to the real writer. */
function heldWriter(dir: () => string): ReceiptFileWriter & { release(): void; held: number } {
  let real: ReceiptFileWriter | null = null;
  let held: Array<readonly [string, string]> = [];
  let released: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    released = resolve;
  });
  const writer = {
    get held() {
      return held.length;
    },
    write(id: string, text: string) {
      if (real) return real.write(id, text);
      held.push([id, text]);
      return gate.then(() => real?.flush());
    },
    async flush() {
      if (held.length > 0) await gate;
      await real?.flush();
    },
    async close() {
      await writer.flush();
      await real?.close();
    },
    release() {
      real = createReceiptFileWriter(dir());
      for (const [id, text] of held) void real.write(id, text);
      held = [];
      released();
    },
  };
  return writer;
}

describe('receipt files off the request path', () => {
  it('answers a receipt whose file is not written yet, from memory, and the file appears once written', async () => {
    const writer = heldWriter(() => join(running?.dataDir ?? '', 'receipts'));
    running = await startTestService({}, { receiptFiles: writer }, { listen: false });
    const { service, dataDir } = running;
    const answer = await appFetch(
      service,
      `/v1/products/endpoint-spot-check?url=${encodeURIComponent('http://10.9.8.7/x')}`,
      {
        headers: { 'x-service-key': EXEMPT_SECRET },
      },
    );
    expect(answer.status).toBe(200);
    const { receipt_id: id } = (await answer.json()) as { receipt_id: string };
    // The ledger hands the file to its writer once the receipt is durable; the writer batches it with its turn.
    await vi.waitFor(() => expect(writer.held).toBe(1), { timeout: 20_000 });
    const file = join(dataDir, 'receipts', `${id}.json`);
    expect(existsSync(file)).toBe(false);

    const served = await appFetch(service, `/v1/receipts/${id}`);
    expect(served.status).toBe(200);
    const receipt = (await served.json()) as Record<string, unknown>;
    expect(receipt.id).toBe(id);
    const jwks = await (await appFetch(service, '/.well-known/jwks.json')).json();
    expect((await verifyReceipt(receipt, jwks)).ok).toBe(true);

    writer.release();
    await service.deps.ledger.flushFiles();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(receipt);
  });
});
