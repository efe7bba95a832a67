import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInvoice, newPayToken } from '../../../core/invoice.ts';
import { signReceipt } from '../../../core/receipt.ts';
import { hashSecret } from '../../../core/service-key.ts';
import { createHostedMeter } from '../../../io/hosted-meter/memory.ts';
import {
  compactUsage,
  type JournalTail,
  loadMeter,
  recordHostedUse,
} from '../../../io/hosted-meter/usage.ts';
import { openIntegratorStore } from '../../../io/integrators/duckdb.ts';
import { invoicePaths, issueInvoices } from '../../../io/integrators/invoices.ts';
import { applyOp, parseOp } from '../../../io/integrators/ops.ts';
import type { IntegratorStore } from '../../../io/integrators/port.ts';
import { loadSigningKeys } from '../../../io/keys.ts';
import { createJournal, type Journal, readJournal } from '../../../io/receipts/journal.ts';
import { openDuckDbWatchStore } from '../../../io/watches/duckdb.ts';
import type { WatchRow } from '../../../io/watches/port.ts';
import { verifyReceipt } from '../../../verify/verify.ts';

const AT = '2026-05-02T10:00:00.000Z';
const WALLET = '0x2222222222222222222222222222222222222222';
let dir: string;
let store: IntegratorStore;
let journal: Journal;
const noInvoices = async () => {
  throw new Error('not here');
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spotcheck-hosted-'));
  store = await openIntegratorStore(join(dir, 'integrators.duckdb'));
  journal = await createJournal({ dir: join(dir, 'journal'), fsync: false });
});
afterEach(async () => {
  await journal.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function op(value: unknown) {
  return applyOp(store, parseOp(value), noInvoices);
}
const tail: JournalTail = (visit, options) => journal.replay(visit, options);

/** Records `count` uses of `integrator` in `month` through the meter and the journal, as the server does. */
async function use(integrator: string, month: string, count: number, endUser: string | null = null) {
  const meter = createHostedMeter({ now: () => new Date(`${month}-15T00:00:00Z`) });
  await Promise.all(
    Array.from({ length: count }, async () => {
      const reserved = meter.reserve(integrator, 10n ** 15n, endUser);
      if (!reserved.ok) throw new Error('refused');
      await recordHostedUse(journal, reserved.use, 'k');
    }),
  );
}

describe('integrator operations', () => {
  it('creates integrators, issues several keys each, and lists them with their states', async () => {
    await op({ op: 'create', id: 'acme', name: 'Acme Router', credit_limit_atomic: '50000000', at: AT });
    await expect(
      op({ op: 'create', id: 'acme', name: 'again', credit_limit_atomic: '1', at: AT }),
    ).rejects.toThrow(/exists/);
    for (const [keyId, label] of [
      ['aaaaaaaaaaaa', 'prod'],
      ['bbbbbbbbbbbb', 'staging'],
    ] as const)
      await op({
        op: 'issue',
        integrator: 'acme',
        key_id: keyId,
        secret_hash: hashSecret(label),
        label,
        at: AT,
      });
    await expect(
      op({
        op: 'issue',
        integrator: 'nobody',
        key_id: 'cccccccccccc',
        secret_hash: hashSecret('x'),
        label: 'x',
        at: AT,
      }),
    ).rejects.toThrow(/no integrator/);
    expect(await op({ op: 'list' })).toEqual([
      {
        id: 'acme',
        name: 'Acme Router',
        credit_limit_atomic: '50000000',
        created_at: AT,
        keys: [
          { id: 'aaaaaaaaaaaa', label: 'prod', state: 'active', created_at: AT },
          { id: 'bbbbbbbbbbbb', label: 'staging', state: 'active', created_at: AT },
        ],
      },
    ]);
    // Only the hash is stored.
    expect((await store.keys()).map((key) => key.secretHash)).toEqual([
      hashSecret('prod'),
      hashSecret('staging'),
    ]);
  });

  it('suspends and resumes a key or every key of an integrator; a revoked key stays revoked', async () => {
    await op({ op: 'create', id: 'acme', name: 'Acme', credit_limit_atomic: '0', at: AT });
    for (const keyId of ['aaaaaaaaaaaa', 'bbbbbbbbbbbb'])
      await op({
        op: 'issue',
        integrator: 'acme',
        key_id: keyId,
        secret_hash: hashSecret(keyId),
        label: 'l',
        at: AT,
      });
    const states = async () => (await store.keys()).map((key) => key.state);
    await op({ op: 'state', target: 'aaaaaaaaaaaa', state: 'suspended', at: AT });
    expect(await states()).toEqual(['suspended', 'active']);
    await op({ op: 'state', target: 'bbbbbbbbbbbb', state: 'revoked', at: AT });
    await op({ op: 'state', target: 'acme', state: 'active', at: AT });
    expect(await states()).toEqual(['active', 'revoked']);
    await op({ op: 'state', target: 'acme', state: 'suspended', at: AT });
    expect(await states()).toEqual(['suspended', 'revoked']);
    await expect(op({ op: 'state', target: 'nobody', state: 'revoked', at: AT })).rejects.toThrow(/no key/);
  });

  it('refuses an integrator id that is a key id, and a key id that is an integrator id', async () => {
    await op({ op: 'create', id: 'acme', name: 'Acme', credit_limit_atomic: '0', at: AT });
    await op({ op: 'create', id: 'zzzzzzzzzzzz', name: 'Twelve', credit_limit_atomic: '0', at: AT });
    const issue = (key_id: string) =>
      op({ op: 'issue', integrator: 'acme', key_id, secret_hash: hashSecret(key_id), label: 'l', at: AT });
    await issue('aaaaaaaaaaaa');
    await expect(
      op({ op: 'create', id: 'aaaaaaaaaaaa', name: 'Clash', credit_limit_atomic: '0', at: AT }),
    ).rejects.toThrow('aaaaaaaaaaaa is already a key id; choose another --id for the integrator');
    await expect(issue('zzzzzzzzzzzz')).rejects.toThrow(
      'key id zzzzzzzzzzzz is an integrator id; nothing was issued, run keys:issue again',
    );
    expect((await store.integrators()).map((row) => row.id)).toEqual(['acme', 'zzzzzzzzzzzz']);
    expect((await store.keys()).map((row) => row.id)).toEqual(['aaaaaaaaaaaa']);
  });

  it('refuses malformed operations with the field named', () => {
    expect(() => parseOp({ op: 'create', id: 'A B', name: 'x', credit_limit_atomic: '1', at: AT })).toThrow(
      /id/,
    );
    expect(() => parseOp({ op: 'invoices', month: '2026-13' })).toThrow(/month/);
    expect(() => parseOp({ op: 'drop' })).toThrow(/bad operation/);
    expect(() => parseOp(null)).toThrow(/bad operation/);
  });
});

describe('hosted usage through the journal', () => {
  it('folds concurrent uses exactly once, whatever the number of compactions', async () => {
    await use('acme', '2026-05', 250, 'eu:a');
    await use('acme', '2026-05', 50, 'eu:b');
    await use('zeta', '2026-04', 3);
    expect(await compactUsage(store, tail)).toBe(303);
    expect(await compactUsage(store, tail)).toBe(0);
    await use('acme', '2026-05', 7);
    expect(await compactUsage(store, tail)).toBe(7);
    expect(await store.usage({})).toEqual([
      { integrator: 'zeta', month: '2026-04', calls: 3, endUsers: 0 },
      { integrator: 'acme', month: '2026-05', calls: 307, endUsers: 2 },
    ]);
    const meter = createHostedMeter({ now: () => new Date('2026-05-20T00:00:00Z') });
    await loadMeter(store, meter, '2026-05');
    expect(meter.calls('acme', '2026-05')).toBe(307);
    expect(meter.endUsers('acme', '2026-05')).toBe(2);
  });

  it('two compactions at once fold every use exactly once', async () => {
    await use('acme', '2026-05', 40);
    const folded = await Promise.all([
      compactUsage(store, tail),
      compactUsage(store, tail),
      compactUsage(store, tail),
    ]);
    expect(folded.reduce((a, b) => a + b, 0)).toBe(40);
    expect((await store.usage({}))[0]?.calls).toBe(40);
  });

  it('a snapshot interrupted before its commit leaves the journal tail to the next compaction', async () => {
    await use('acme', '2026-05', 5);
    const failing = { ...store, foldUsage: async () => Promise.reject(new Error('killed')) };
    await expect(compactUsage(failing, tail)).rejects.toThrow('killed');
    expect(await store.usage({})).toEqual([]);
    expect(await compactUsage(store, tail)).toBe(5);
    expect((await store.usage({}))[0]?.calls).toBe(5);
  });
});

describe('invoices', () => {
  const issue = async (month: string, now: string) => {
    const keys = await loadSigningKeys({ dir: join(dir, 'keys') });
    return issueInvoices({
      store,
      tail,
      month,
      now: new Date(now),
      signer: keys.signer,
      dir: join(dir, 'invoices'),
      payTo: WALLET,
      baseUrl: 'https://spotcheck.example',
      random: (n) => crypto.getRandomValues(new Uint8Array(n)),
    });
  };
  const body = async (id: string) => (await store.invoice(id))?.body as Record<string, unknown> | undefined;

  it('bills uses of a month journaled after its invoices ran on the next invoice, once', async () => {
    await op({ op: 'create', id: 'acme', name: 'Acme Router', credit_limit_atomic: '0', at: AT });
    await use('acme', '2026-04', 1002);
    expect(await issue('2026-04', '2026-05-01T00:00:05Z')).toEqual([
      { id: 'inv-202604-acme', integrator: 'acme', total_atomic: '40000', created: true },
    ]);
    // Reserved in April, journaled after April's run: three for acme, one for an integrator April never billed.
    await use('acme', '2026-04', 3);
    await use('late', '2026-04', 1);

    const may = await issue('2026-05', '2026-06-01T00:00:05Z');
    expect(may).toEqual([
      { id: 'inv-202605-acme', integrator: 'acme', total_atomic: '60000', created: true },
      { id: 'inv-202605-late', integrator: 'late', total_atomic: '0', created: true },
    ]);
    expect(await body('inv-202605-acme')).toMatchObject({
      calls: 0,
      earlier_months: [{ month: '2026-04', calls: 3, amount_atomic: '60000', amount_usd: '0.06' }],
      total: { atomic: '60000' },
    });
    expect((await body('inv-202605-late'))?.earlier_months).toEqual([
      { month: '2026-04', calls: 1, amount_atomic: '0', amount_usd: '0' },
    ]);
    // Billed once: a rerun of April keeps acme's invoice and gives `late` none (May billed its April use), a rerun
    // of May keeps May's, and June bills only what came after.
    expect(await issue('2026-04', '2026-06-02T00:00:00Z')).toEqual([
      { id: 'inv-202604-acme', integrator: 'acme', total_atomic: '40000', created: false },
    ]);
    expect((await issue('2026-05', '2026-06-02T00:00:00Z')).map((item) => item.created)).toEqual([
      false,
      false,
    ]);
    await use('acme', '2026-04', 1);
    await use('acme', '2026-06', 2);
    expect(await issue('2026-06', '2026-07-01T00:00:05Z')).toEqual([
      { id: 'inv-202606-acme', integrator: 'acme', total_atomic: '20000', created: true },
    ]);
    expect(await body('inv-202606-acme')).toMatchObject({
      calls: 2,
      earlier_months: [{ month: '2026-04', calls: 1, amount_atomic: '20000' }],
    });
    expect(await store.invoiceRuns()).toEqual(['2026-04', '2026-05', '2026-06']);
  });

  it('bills hosted watches per watch-month on a line of their own, and leaves invoices without watches as before', async () => {
    const watches = await openDuckDbWatchStore(':memory:');
    try {
      const watch = (id: string, integrator: string | null, createdAt: string, days: number): WatchRow => ({
        id,
        tokenHash: `hash-${id}`,
        url: `https://seller.example/${id}`,
        urlNorm: `https://seller.example/${id}`,
        method: 'GET',
        payTo: null,
        network: null,
        claimedPrice: null,
        webhookUrl: null,
        events: ['terms_changed'],
        owner: integrator === null ? { kind: 'paid', tx: '0x1' } : { kind: 'hosted', integrator, keyId: 'k' },
        createdAt,
        expiresAtMs: Date.parse(createdAt) + days * 86_400_000,
        status: 'active',
        expiringSent: false,
      });
      // acme: one watch across April and May, one deleted in March; `watcher` has watches and no check; a watch
      // bought through x402 is on no invoice; `plain` has checks only.
      await watches.createWatch(watch('wa-a1', 'acme', '2026-04-20T00:00:00.000Z', 30), 0);
      await watches.createWatch(watch('wa-a2', 'acme', '2026-03-02T00:00:00.000Z', 30), 0);
      await watches.setStatus('wa-a2', 'deleted', Date.parse('2026-03-05T00:00:00Z'));
      await watches.createWatch(watch('wa-w1', 'watcher', '2026-04-01T00:00:00.000Z', 30), 0);
      await watches.createWatch(watch('wa-w2', 'watcher', '2026-04-29T00:00:00.000Z', 30), 0);
      await watches.createWatch(watch('wa-p1', null, '2026-04-10T00:00:00.000Z', 30), 0);
      await use('acme', '2026-04', 1002);
      await use('plain', '2026-04', 3);
      const keys = await loadSigningKeys({ dir: join(dir, 'keys') });
      const parts = {
        store,
        tail,
        now: new Date('2026-06-01T00:00:05Z'),
        signer: keys.signer,
        dir: join(dir, 'invoices'),
        payTo: WALLET,
        baseUrl: 'https://spotcheck.example',
        random: (n: number) => new Uint8Array(n).fill(7),
        watchMonths: watches.watchMonths,
      };
      expect(await issueInvoices({ ...parts, month: '2026-04' })).toEqual([
        { id: 'inv-202604-acme', integrator: 'acme', total_atomic: '540000', created: true },
        { id: 'inv-202604-plain', integrator: 'plain', total_atomic: '0', created: true },
        { id: 'inv-202604-watcher', integrator: 'watcher', total_atomic: '1000000', created: true },
      ]);
      const line = (quantity: number) => ({
        quantity,
        unit_price_atomic: '500000',
        amount_atomic: String(500000 * quantity),
        amount_usd: String(0.5 * quantity),
      });
      expect(await body('inv-202604-acme')).toMatchObject({ calls: 1002, watch_months: line(1) });
      expect(await body('inv-202604-watcher')).toMatchObject({ calls: 0, watch_months: line(2) });
      const signed = JSON.parse(
        await readFile(invoicePaths(parts.dir, { id: 'inv-202604-watcher', month: '2026-04' }).json, 'utf8'),
      );
      expect(await verifyReceipt(signed, keys.jwks)).toEqual({ ok: true, kid: keys.signer.kid });
      const pdf = await readFile(invoicePaths(parts.dir, { id: 'inv-202604-watcher', month: '2026-04' }).pdf);
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      // Without watches the body has no such member: the bytes a builder that knows of no watches signs.
      const plain = await body('inv-202604-plain');
      expect(plain).not.toHaveProperty('watch_months');
      const before = buildInvoice({
        integrator: { id: 'plain', name: 'plain' },
        month: '2026-04',
        calls: 3,
        endUsers: 0,
        payTo: WALLET,
        baseUrl: parts.baseUrl,
        payToken: newPayToken(parts.random),
        earlier: [],
      });
      expect(JSON.stringify(signReceipt(before, keys.signer))).toBe(JSON.stringify(plain));
      // May: acme's watch made on 20 April is still active; watcher's second one too, its first expired 1 May.
      const may = await issueInvoices({ ...parts, month: '2026-05' });
      expect(may.find((item) => item.integrator === 'watcher')).toMatchObject({ total_atomic: '500000' });
    } finally {
      await watches.close();
    }
  });

  it('issues a signed JSON invoice and a reproducible PDF per integrator, once', async () => {
    await op({ op: 'create', id: 'acme', name: 'Acme Router', credit_limit_atomic: '0', at: AT });
    await use('acme', '2026-04', 2003, 'eu:a');
    await use('tiny', '2026-04', 10);
    await use('acme', '2026-05', 4);
    const keys = await loadSigningKeys({ dir: join(dir, 'keys') });
    const run = (now: string) =>
      issueInvoices({
        store,
        tail: (visit, options) => readJournal(join(dir, 'journal'), visit, options),
        month: '2026-04',
        now: new Date(now),
        signer: keys.signer,
        dir: join(dir, 'invoices'),
        payTo: WALLET,
        baseUrl: 'https://spotcheck.example',
        random: (n) => crypto.getRandomValues(new Uint8Array(n)),
      });
    await expect(run('2026-04-30T23:59:59Z')).rejects.toThrow(/has not ended/);
    const first = await run('2026-05-03T00:00:00Z');
    expect(first).toEqual([
      { id: 'inv-202604-acme', integrator: 'acme', total_atomic: '20030000', created: true },
      { id: 'inv-202604-tiny', integrator: 'tiny', total_atomic: '0', created: true },
    ]);
    const paths = invoicePaths(join(dir, 'invoices'), { id: 'inv-202604-acme', month: '2026-04' });
    const json = JSON.parse(await readFile(paths.json, 'utf8'));
    expect(json).toMatchObject({
      calls: 2003,
      end_users: 1,
      integrator: { id: 'acme', name: 'Acme Router' },
    });
    expect(await verifyReceipt(json, keys.jwks)).toEqual({ ok: true, kid: keys.signer.kid });
    const pdf = await readFile(paths.pdf);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const digest = createHash('sha256').update(pdf).digest('hex');

    // A second run finds both invoices, keeps them, and writes the same bytes.
    await use('acme', '2026-04', 1);
    const second = await run('2026-05-04T00:00:00Z');
    expect(second.map((item) => item.created)).toEqual([false, false]);
    expect(
      createHash('sha256')
        .update(await readFile(paths.pdf))
        .digest('hex'),
    ).toBe(digest);
    expect((await store.invoice('inv-202604-acme'))?.status).toBe('open');
    expect((await store.invoice('inv-202604-tiny'))?.status).toBe('nothing_due');

    expect(await store.markInvoicePaid('inv-202604-acme', '0xabc', AT)).toBe(true);
    expect(await store.markInvoicePaid('inv-202604-acme', '0xdef', AT)).toBe(false);
    expect(await store.invoice('inv-202604-acme')).toMatchObject({ status: 'paid', tx: '0xabc' });
  });
});
