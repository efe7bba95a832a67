import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planCrawl } from '../../../core/crawl-plan.ts';
import type { ProbeOutcome } from '../../../core/model.ts';
import { BASE_USDC } from '../../../core/networks.ts';
import { signCanonical } from '../../../core/receipt.ts';
import { type AssemblyInput, assembleInline, createAssemblyThread } from '../../../crawl/assembly.ts';
import { loadSigningKeys } from '../../../io/keys.ts';
import { verifyReceipt } from '../../../verify/verify.ts';
import { buildAccept, buildV2Header } from '../../fixtures/challenge.ts';

const dir = mkdtempSync(join(tmpdir(), 'spotcheck-assembly-'));
const thread = createAssemblyThread();
afterAll(async () => {
  await thread.close();
  rmSync(dir, { recursive: true, force: true });
});

const WALLET = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const url = 'https://seller.example/api/weather';
const [endpoint] = planCrawl(
  [
    {
      url,
      urlNorm: url,
      method: 'GET',
      priceUsd: 0.01,
      network: 'eip155:8453',
      asset: BASE_USDC,
      payTo: WALLET,
      example: null,
      source: 'cdp',
    },
  ],
  null,
).endpoints;

/** A 402 asking `amount` atomic units of USDC. */
function outcome(amount: string): ProbeOutcome {
  return {
    kind: 'response',
    probedAt: '2026-11-24T09:00:00.000Z',
    elapsedMs: 12,
    response: {
      status: 402,
      headers: {
        'payment-required': buildV2Header({ accepts: [buildAccept({ amount, payTo: WALLET })] }),
        'content-type': 'application/json',
      },
      body: '{}',
      bodyTruncated: false,
      methodUsed: 'GET',
      finalUrl: url,
      redirects: 0,
    },
  };
}

function input(amount: string, kid: string): AssemblyInput {
  if (!endpoint) throw new Error('no endpoint planned');
  return {
    outcome: outcome(amount),
    url,
    example: null,
    endpoint,
    now: Date.parse('2026-11-24T09:00:01.000Z'),
    id: 'sc-assemblyaaaaaaaaaaaaaaaaaaaa',
    baseUrl: 'https://spotcheck.example',
    runId: 'run-20261124-test',
    origin: 'crawl',
    kid,
  };
}

describe('the crawl assembly thread', () => {
  it('gives the same canonical text and facts as inline, and its text signs into a receipt that verifies', async () => {
    const { signer, jwks } = await loadSigningKeys({ dir: join(dir, 'keys') });
    for (const amount of ['10000', '20000']) {
      const onThread = await thread.assemble(input(amount, signer.kid));
      const inline = await assembleInline(input(amount, signer.kid));
      expect(onThread).toEqual(inline);
      const { json } = signCanonical(onThread.withKid, onThread.text, signer);
      expect(await verifyReceipt(JSON.parse(json), jwks)).toMatchObject({ ok: true });
      // The listing asked 0.01 USD: the live 402 asking twice that is a skip.
      expect(onThread.facts.verdict).toBe(amount === '10000' ? 'pay' : 'skip');
    }
  });

  it('rejects one call that fails and keeps serving the next, and refuses calls once closed', async () => {
    const broken = { ...input('10000', 'k1'), endpoint: null } as unknown as AssemblyInput;
    await expect(thread.assemble(broken)).rejects.toThrow(/^crawl assembly: /);
    expect((await thread.assemble(input('10000', 'k1'))).withKid.kid).toBe('k1');
    const other = createAssemblyThread();
    await other.close();
    await expect(other.assemble(input('10000', 'k1'))).rejects.toThrow('crawl assembly: closed');
  });

  it('will not sign a text made for another key', async () => {
    const { signer } = await loadSigningKeys({ dir: join(dir, 'keys') });
    const made = await thread.assemble(input('10000', 'another-kid'));
    expect(() => signCanonical(made.withKid, made.text, signer)).toThrow(RangeError);
  });
});
