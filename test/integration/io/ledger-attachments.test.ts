/**
 * The ledger only signs, journals and publishes: the quota use an answer carries is an attachment it hands back
 * at recovery, and journals written before the split (records naming it `quota`) restore the same counts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recoverWithQuota } from '../../../api/quota-use.ts';
import { createQuota } from '../../../io/quota/memory.ts';
import { createJournal } from '../../../io/receipts/journal.ts';
import { createLedger } from '../../../io/receipts/ledger.ts';
import { createMemoryStore } from '../../../io/store/memory.ts';

const NOW = new Date('2026-11-24T02:00:00.000Z');
const signer = { kid: 'k', sign: () => new Uint8Array(64) };
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-ledger-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function openLedger() {
  const journal = await createJournal({ dir: join(dir, 'journal'), fsync: false, now: () => NOW });
  const ledger = createLedger({
    signer: () => signer,
    journal,
    store: createMemoryStore(),
    receiptsDir: join(dir, 'receipts'),
    checkpointFile: join(dir, 'checkpoint.json'),
  });
  return { journal, ledger };
}

describe('ledger attachments', () => {
  it('hands back what a receipt and a lone attachment carried, and the API rebuilds the quota from it', async () => {
    const first = await openLedger();
    const row = {
      id: 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa',
      type: 'check' as const,
      issuedAt: NOW.toISOString(),
      url: 'https://x.example/',
      urlNorm: 'https://x.example',
      method: 'GET' as const,
      verdict: 'pay',
      reason: 'price_ok',
      checkType: 'dry-run',
      mode: 'live' as const,
      tier: 'free',
    };
    await first.ledger.issue(
      { id: row.id },
      { row, observation: null, attached: { day: '2026-11-24', keys: [['check', 'ip-a']] } },
    );
    await first.ledger.attach({ day: '2026-11-24', keys: [['lookup', 'ip-a']] });
    // A record of a journal written before the split names the attachment `quota`.
    await first.journal.append({
      v: 1,
      kind: 'quota',
      quota: { day: '2026-11-24', keys: [['lookup', 'ip-b']] },
    });
    await first.ledger.flushFiles();
    await first.journal.close();

    const second = await openLedger();
    const quota = createQuota({ now: () => NOW });
    const seen: unknown[] = [];
    await second.ledger.recover({ attachedSince: '2026-11-24', onAttached: (a) => seen.push(a) });
    expect(seen).toHaveLength(3);
    await second.journal.close();

    const third = await openLedger();
    await recoverWithQuota(third.ledger, quota, NOW);
    expect([quota.used('check', 'ip-a'), quota.used('lookup', 'ip-a'), quota.used('lookup', 'ip-b')]).toEqual(
      [1, 1, 1],
    );
    await third.journal.close();
  });
});
