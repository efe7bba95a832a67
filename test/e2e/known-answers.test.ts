/**
 * Known-answer calls end to end: the sandbox's task sellers (official SDK, settling on anvil), a run that funds a
 * wallet of its own from the configured payer, checks, pays with fresh inputs and publishes, the running service
 * taking the run in without a restart, and the lookup ranking the facts. Money is real on the sandbox: balances
 * match the funding and the receipts to the atomic unit; the budget holds; each run pays from another wallet.
 */
import { mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBudget } from '../../core/budget.ts';
import { parseTasks, type Task } from '../../core/tasks.ts';
import { runKnownAnswers } from '../../crawl/known-answers.ts';
import { knownAnswerDeps } from '../../crawl/known-answers-deps.ts';
import { loadSigningKeys } from '../../io/keys.ts';
import { startWorld, type World } from '../../sandbox/world.ts';
import { EXEMPT_SECRET, startTestService, type TestService } from '../helpers/service.ts';
import { fetchFrom, usdcTransfers, worldEnv } from '../helpers/world.ts';

let world: World;
let spot: TestService;
let tasks: Task[];
const quiet = { write: () => true };

beforeAll(async () => {
  world = await startWorld({ buyers: 3 });
  spot = await startTestService(worldEnv(world.state));
  const parsed = parseTasks(world.taskSellers.tasks);
  if (!parsed.ok) throw new Error(parsed.message);
  tasks = parsed.value;
});
afterAll(async () => {
  await spot?.stop();
  await world?.stop();
});

/** A run whose configured payer is sandbox buyer `buyer` (given ETH: funding the run's wallet is a transfer). */
async function run(dataDir: string, buyer: number, budgetUsd: string, n: number, only: Task[] = tasks) {
  const keys = await loadSigningKeys({ dir: join(dataDir, 'keys') });
  const payerKey = world.state.buyerKeys[buyer] as `0x${string}`;
  const account = privateKeyToAccount(payerKey);
  await world.chain.testClient.setBalance({ address: account.address, value: parseEther('1') });
  const lines: string[] = [];
  const result = await runKnownAnswers(
    knownAnswerDeps({
      dataDir,
      baseUrl: spot.url,
      allowCidrs: '127.0.0.0/8',
      payerKey,
      rpcUrl: world.state.rpcUrls[0] ?? null,
      signer: keys.signer,
      progressOut: quiet,
      log: (line) => lines.push(line),
    }),
    { tasks: only, catalog: tasks, n, budgetUsd, resume: false },
  );
  return { result, lines, account };
}

type PaidRecord = { pay_to: string; price_atomic: string; settlement_tx: string | null };

async function paidRecords(dataDir: string, runId: string): Promise<PaidRecord[]> {
  const text = await readFile(join(dataDir, 'known-answers', 'runs', runId, 'paid-calls.ndjson'), 'utf8');
  return text
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as PaidRecord);
}

/** Checks the run's funding on chain: one transfer of the whole budget from the configured payer to the run wallet. */
async function expectFunded(fundingTx: string | null, from: string, to: string, atomic: bigint) {
  expect(fundingTx).toMatch(/^0x[0-9a-f]{64}$/);
  const [transfer, ...more] = await usdcTransfers(world, fundingTx as `0x${string}`);
  expect(more).toEqual([]);
  expect(transfer?.from.toLowerCase()).toBe(from.toLowerCase());
  expect(transfer?.to.toLowerCase()).toBe(to.toLowerCase());
  expect(transfer?.value).toBe(atomic);
}

type Entry = {
  endpoint: string;
  pass_rate: number | null;
  calls: number;
  receipts: Array<{ receipt_id: string }>;
};

describe('known-answer calls and the lookup ranked by them', () => {
  it('pays, publishes, and the running service ranks right > sometimes > wrong, cheaper first, broken apart', async () => {
    const buyer = world.chain.accounts.buyers[0]?.address as `0x${string}`;
    const before = await world.chain.balanceOf(buyer);
    const { result, lines } = await run(spot.dataDir, 0, '4', 3);
    const budget = createBudget('4');
    expect(result.committed).toBeLessThanOrEqual(budget?.limit ?? 0n);
    // Paid from a wallet of the run's own, funded with the whole budget by the configured payer.
    expect(result.payer.toLowerCase()).not.toBe(buyer.toLowerCase());
    await expectFunded(result.fundingTx, buyer, result.payer, 4_000_000n);

    // Every settled receipt against the chain: the run wallet's loss and each seller's gain, to the atomic unit.
    const records = await paidRecords(spot.dataDir, result.runId);
    const bySeller = new Map<string, bigint>();
    for (const r of records) {
      expect(r.settlement_tx).toMatch(/^0x[0-9a-f]{64}$/);
      // Each settlement on chain: one USDC transfer of exactly the price, from the run wallet to the seller's.
      const [transfer, ...more] = await usdcTransfers(world, r.settlement_tx as `0x${string}`);
      expect(more).toEqual([]);
      expect(transfer?.from.toLowerCase()).toBe(result.payer.toLowerCase());
      expect(transfer?.to.toLowerCase()).toBe(r.pay_to.toLowerCase());
      expect(transfer?.value).toBe(BigInt(r.price_atomic));
      bySeller.set(r.pay_to, (bySeller.get(r.pay_to) ?? 0n) + BigInt(r.price_atomic));
    }
    for (const [seller, total] of bySeller)
      expect(await world.chain.balanceOf(seller as `0x${string}`)).toBe(total);
    const paidTotal = [...bySeller.values()].reduce((a, b) => a + b, 0n);
    // The payer lost the budget; the run wallet keeps what it did not pay.
    expect(before - (await world.chain.balanceOf(buyer))).toBe(4_000_000n);
    expect(await world.chain.balanceOf(result.payer)).toBe(4_000_000n - paidTotal);
    expect(result.committed).toBe(paidTotal * 10n ** 12n);

    const lookup = async (query: string, headers: Record<string, string> = {}) => {
      const res = await fetchFrom('198.51.100.80')(`${spot.url}/v1/lookup?${query}`, { headers });
      expect(res.status).toBe(200);
      return (await res.json()) as { results: Entry[]; facts_only: Entry[]; access: unknown };
    };
    // The running service looks for a newly published run at most once a second (api/paid-call-intake.ts).
    await vi.waitFor(
      async () => {
        const res = await fetch(`${spot.url}/v1/tasks`, { headers: { 'x-service-key': EXEMPT_SECRET } });
        const names = ((await res.json()) as { tasks: Array<{ name: string }> }).tasks.map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(tasks.map((t) => t.name)));
      },
      { timeout: 20_000, interval: 100 },
    );
    const urls = world.state.taskSellers;
    for (const task of tasks) {
      const body = await lookup(`task=${task.name}&max_price=0.05&n=3`);
      const url = (b: string) => urls[`${task.name}/${b}`]?.url;
      // The constant seller's one body passed every task while requests were fixed; now it passes none.
      expect(body.results.map((e) => e.endpoint)).toEqual(
        [url('right-cheap'), url('right'), url('sometimes'), url('wrong'), url('constant')].map(
          (u) => new URL(u ?? '').href,
        ),
      );
      expect(body.results.map((e) => e.pass_rate)).toEqual([1, 1, 0.6667, 0, 0]);
      expect(body.facts_only.map((e) => e.endpoint)).toEqual([new URL(url('no-delivery') ?? '').href]);
      expect(body.results[0]?.receipts).toHaveLength(3);
      // Without max_price the expensive one ranks among the right ones, by price last.
      const all = await lookup(`task=${task.name}&n=3`, { 'x-service-key': EXEMPT_SECRET });
      expect(all.results[2]?.endpoint).toBe(new URL(url('expensive') ?? '').href);
      const { access: _a, ...exempt } = all;
      const { access: _b, ...free } = await lookup(`task=${task.name}&n=3`);
      expect(free).toEqual(exempt);
    }
    // A skip of a check naming the task lists the lookup's first three others within claimed_price, each with the
    // receipt of its newest paid call (docs/api.md §2.1 `alternatives`).
    const fx = await lookup('task=sandbox-fx&max_price=0.05', { 'x-service-key': EXEMPT_SECRET });
    const wrong = new URL(urls['sandbox-fx/wrong']?.url ?? '').href;
    const query = new URLSearchParams({
      url: wrong,
      task: 'sandbox-fx',
      claimed_price: '0.05',
      pay_to: `0x${'7'.repeat(40)}`,
    });
    const skipped = (await (
      await fetch(`${spot.url}/v1/products/endpoint-spot-check?${query}`, {
        headers: { 'x-service-key': EXEMPT_SECRET },
      })
    ).json()) as { verdict: string; alternatives: Array<{ endpoint: string; receipt_url: string }> };
    expect(skipped.verdict).toBe('skip');
    const others = fx.results.filter((e) => e.endpoint !== wrong).slice(0, 3);
    expect(skipped.alternatives.map((a) => a.endpoint)).toEqual(others.map((e) => e.endpoint));
    expect(skipped.alternatives.map((a) => a.receipt_url)).toEqual(
      others.map((e) => `${spot.config.baseUrl}/v1/receipts/${e.receipts[0]?.receipt_id}`),
    );
    // The receipts named are served, signed, self-checked.
    const first = (await lookup('task=sandbox-fx&n=3')).results[0]?.receipts[0]?.receipt_id;
    const receipt = (await (await fetch(`${spot.url}/v1/receipts/${first}`)).json()) as Record<
      string,
      unknown
    >;
    expect(receipt).toMatchObject({
      type: 'paid-call',
      check_type: 'self-checked',
      known_answer: 'pass',
      payer: result.payer,
      seed: expect.stringMatching(/^[0-9a-f]{32}$/),
      inputs: { amount: expect.any(Number) },
    });
    expect(receipt.signature).toEqual(expect.any(String));
    expect(lines.join('\n')).not.toMatch(/refused/);
  });

  it('never exceeds the budget: refuses before signing, and says so', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-budget-'));
    try {
      const buyer = world.chain.accounts.buyers[1]?.address as `0x${string}`;
      const before = await world.chain.balanceOf(buyer);
      const fx = tasks.filter((t) => t.name === 'sandbox-fx');
      const { result, lines } = await run(dataDir, 1, '0.05', 3, fx);
      // The payer funded exactly the budget; the run wallet spent at most that.
      expect(before - (await world.chain.balanceOf(buyer))).toBe(50_000n);
      const spent = 50_000n - (await world.chain.balanceOf(result.payer));
      expect(spent).toBeLessThanOrEqual(50_000n);
      expect(result.committed).toBeLessThanOrEqual(50_000n * 10n ** 12n);
      expect(result.committed).toBe(spent * 10n ** 12n);
      expect(result.refused).toBeGreaterThan(0);
      expect(lines.join('\n')).toMatch(
        /not paid: refused before signing: USD [\d.]+ would exceed the budget left/,
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('pays each run from a new wallet funded by the same payer, and every balance adds up', async () => {
    const dataDirs = [mkdtempSync(join(tmpdir(), 'ka-rotate-')), mkdtempSync(join(tmpdir(), 'ka-rotate-'))];
    try {
      const payer = world.chain.accounts.buyers[2]?.address as `0x${string}`;
      const seller = world.state.taskSellers['sandbox-sha256/right-cheap'];
      if (!seller) throw new Error('no seller');
      const one = tasks
        .filter((t) => t.name === 'sandbox-sha256')
        .map((t) => ({ ...t, candidates: [seller.url] }));
      const payerBefore = await world.chain.balanceOf(payer);
      const sellerBefore = await world.chain.balanceOf(seller.payTo as `0x${string}`);
      const runs = [];
      for (const dataDir of dataDirs) runs.push((await run(dataDir, 2, '0.02', 2, one)).result);
      const [first, second] = runs as [(typeof runs)[0], (typeof runs)[0]];
      expect(first.payer).not.toBe(second.payer);
      for (const r of runs) {
        expect(r.payer.toLowerCase()).not.toBe(payer.toLowerCase());
        await expectFunded(r.fundingTx, payer, r.payer, 20_000n);
        const records = await paidRecords(
          r === first ? (dataDirs[0] as string) : (dataDirs[1] as string),
          r.runId,
        );
        expect(records).toHaveLength(2);
        for (const record of records) {
          const [transfer] = await usdcTransfers(world, record.settlement_tx as `0x${string}`);
          expect(transfer?.from.toLowerCase()).toBe(r.payer.toLowerCase());
        }
        // $0.02 funded, two calls of $0.01 paid: nothing left, nothing missing.
        expect(await world.chain.balanceOf(r.payer)).toBe(0n);
      }
      expect(payerBefore - (await world.chain.balanceOf(payer))).toBe(40_000n);
      expect((await world.chain.balanceOf(seller.payTo as `0x${string}`)) - sellerBefore).toBe(40_000n);
    } finally {
      for (const dataDir of dataDirs) await rm(dataDir, { recursive: true, force: true });
    }
  });
});
