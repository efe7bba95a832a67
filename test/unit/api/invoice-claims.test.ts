/**
 * A settling claim left by a dead instance (api/invoice-claims.ts): marked paid only when the chain shows the claim's
 * authorization moved the invoice's total to the service wallet; left as it is on anything else.
 */
import { describe, expect, it } from 'vitest';
import { settleLeftClaim } from '../../../api/invoice-claims.ts';
import type { ChainEvidence, ChainQuery } from '../../../core/payment-status.ts';
import type { InvoiceRow } from '../../../io/integrators/port.ts';
import { FROM, NONCE, sourceEvidence, TO, TX, unreachableSource } from '../../fixtures/payment.ts';

const TOTAL = '40000';
const NOW = new Date('2026-05-02T10:00:00.000Z');

const settling = (authorization: { payer: string; nonce: string } | null): InvoiceRow => ({
  id: 'inv-202604-acme',
  integrator: 'acme',
  month: '2026-04',
  totalAtomic: TOTAL,
  body: {},
  status: 'settling',
  tx: null,
  paidAt: null,
  payToken: '0123456789abcdef0123456789abcdef',
  claim: { holder: 'dead-instance', until: 1_900_000_000, authorization },
});

/** Both sources saw the authorization used by TX, which moved `value` to `to`. */
const landed = (to: string, value: bigint): ChainEvidence => ({
  sources: ['a', 'b'].map((name) =>
    sourceEvidence({
      name,
      head: 120,
      headTime: 1_800_000_000,
      nonceUsed: true,
      usedLog: { txHash: TX, blockNumber: 100 },
      receipt: {
        txHash: TX,
        status: 'success',
        blockNumber: 100,
        transfer: { from: FROM, to: to as `0x${string}`, value },
      },
    }),
  ),
});

function world(row: InvoiceRow, evidence: ChainEvidence | Error) {
  let current = row;
  const asked: ChainQuery[] = [];
  const deps = {
    payTo: TO,
    now: () => NOW,
    chain: {
      read: async (query: ChainQuery) => {
        asked.push(query);
        if (evidence instanceof Error) throw evidence;
        return evidence;
      },
    },
    store: {
      invoice: async () => current,
      markInvoicePaid: async (_id: string, tx: string, at: string) => {
        current = { ...current, status: 'paid' as const, tx, paidAt: at, claim: null };
        return true;
      },
    },
  };
  return { deps, asked };
}

const authorization = { payer: FROM.toLowerCase(), nonce: NONCE };

describe('a settling claim its instance never finished', () => {
  it('is marked paid with the transaction that moved the total to the service wallet', async () => {
    const { deps, asked } = world(settling(authorization), landed(TO.toLowerCase(), BigInt(TOTAL)));
    const after = await settleLeftClaim(settling(authorization), deps);
    expect(after).toMatchObject({ status: 'paid', tx: TX, paidAt: NOW.toISOString(), claim: null });
    expect(asked).toEqual([expect.objectContaining({ from: authorization.payer, nonce: NONCE })]);
  });

  it('stays settling when the authorization paid another wallet or another amount', async () => {
    for (const evidence of [landed(FROM, BigInt(TOTAL)), landed(TO, BigInt(TOTAL) - 1n)]) {
      const { deps } = world(settling(authorization), evidence);
      expect((await settleLeftClaim(settling(authorization), deps)).status).toBe('settling');
    }
  });

  it('stays settling while the authorization is unused, or when no source answers', async () => {
    const unused: ChainEvidence = {
      sources: [sourceEvidence({ name: 'a', head: 120, headTime: 1_800_000_000 })],
    };
    const down: ChainEvidence = { sources: [unreachableSource('a', 'timeout')] };
    for (const evidence of [unused, down, new Error('socket hang up')]) {
      const { deps } = world(settling(authorization), evidence);
      expect((await settleLeftClaim(settling(authorization), deps)).status).toBe('settling');
    }
  });

  it('asks the chain nothing for a claim that names no authorization, or an invoice not settling', async () => {
    const { deps, asked } = world(settling(null), landed(TO, BigInt(TOTAL)));
    expect((await settleLeftClaim(settling(null), deps)).status).toBe('settling');
    const open = { ...settling(authorization), status: 'open' as const, claim: null };
    expect(await settleLeftClaim(open, deps)).toBe(open);
    expect(asked).toEqual([]);
  });
});
