/**
 * The known-answer sellers on the sandbox chain, paid by the service's paying client: each behaves as documented
 * once paid (the right ones compute the answer from each call's fresh inputs; the constant one fails every call),
 * money moves to its own wallet to the atomic unit, and the budget refuses before signing.
 */
import { randomBytes } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBudget } from '../../core/budget.ts';
import { judgeAnswer } from '../../core/known-answer.ts';
import { SEED_BYTES } from '../../core/task-inputs.ts';
import { parseTasks, type Task, taskRequest } from '../../core/tasks.ts';
import { type ApprovedTerms, createPayingClient, type PayingClient } from '../../io/probe/paying-client.ts';
import { startWorld, type World } from '../../sandbox/world.ts';

let world: World;
let tasks: Task[];

beforeAll(async () => {
  world = await startWorld({ buyers: 2 });
  const parsed = parseTasks(world.taskSellers.tasks);
  if (!parsed.ok) throw new Error(parsed.message);
  tasks = parsed.value;
});
afterAll(() => world?.stop());

const payer = (index: number, usd: string) => {
  const budget = createBudget(usd);
  if (budget === null) throw new Error('budget');
  const key = world.state.buyerKeys[index] as `0x${string}`;
  return createPayingClient({ account: privateKeyToAccount(key), budget });
};

/** The terms of a seller's unpaid 402 (in the runner these come from the check's `payment`). */
async function termsOf(url: string, method: 'GET' | 'POST'): Promise<ApprovedTerms> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: method === 'POST' ? '{}' : null,
  });
  const required = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED') ?? '');
  const offer = required.accepts[0];
  if (!offer) throw new Error('no offer');
  return { network: offer.network, asset: offer.asset, amount_atomic: offer.amount, pay_to: offer.payTo };
}

/** Pays a seller `times` times, each call with fresh inputs; each call comes back with the seed it was drawn from. */
async function payTimes(client: PayingClient, task: Task, behaviour: string, times: number) {
  const seller = world.state.taskSellers[`${task.name}/${behaviour}`];
  if (!seller) throw new Error(behaviour);
  const terms = await termsOf(seller.url, task.request.method);
  const calls = [];
  for (let i = 0; i < times; i++) {
    const seed = randomBytes(SEED_BYTES).toString('hex');
    const { url, method, body } = taskRequest(task, seller.url, seed);
    calls.push({ seed, call: await client.pay({ url, method, body }, terms) });
  }
  return { calls, seller, terms };
}

describe('known-answer sellers on the sandbox chain', () => {
  it('names seven sellers per task, each a candidate of the task file with its own wallet', () => {
    for (const task of tasks) expect(task.candidates).toHaveLength(7);
    const wallets = Object.values(world.state.taskSellers).map((s) => s.payTo.toLowerCase());
    expect(new Set(wallets).size).toBe(wallets.length);
  });

  it('each behaves as documented, and every wallet moved exactly what the settlements say', async () => {
    const client = payer(0, '5');
    const buyer = world.chain.accounts.buyers[0]?.address as `0x${string}`;
    const before = await world.chain.balanceOf(buyer);
    let settledTotal = 0n;
    for (const task of tasks) {
      const outcomes: Record<
        string,
        Array<{ delivered: boolean; known_answer: string; why: string | null }>
      > = {};
      for (const behaviour of ['right', 'right-cheap', 'sometimes', 'wrong', 'no-delivery', 'constant']) {
        const { calls, seller, terms } = await payTimes(client, task, behaviour, 3);
        outcomes[behaviour] = calls.map(({ seed, call }) => {
          if (call.kind !== 'paid') throw new Error(`${behaviour}: ${call.message}`);
          expect(call.settlement_tx).toMatch(/^0x[0-9a-f]{64}$/);
          return judgeAnswer(
            { task, seed, others: tasks },
            { status: call.status ?? 0, text: call.text, truncated: call.truncated },
          );
        });
        expect(await world.chain.balanceOf(seller.payTo as `0x${string}`)).toBe(
          3n * BigInt(terms.amount_atomic),
        );
        settledTotal += 3n * BigInt(terms.amount_atomic);
      }
      const passes = (b: string) => outcomes[b]?.map((o) => o.known_answer);
      expect(passes('right')).toEqual(['pass', 'pass', 'pass']);
      expect(passes('right-cheap')).toEqual(['pass', 'pass', 'pass']);
      expect(passes('sometimes')).toEqual(['pass', 'pass', 'fail']);
      expect(outcomes.wrong?.every((o) => o.delivered && o.known_answer === 'fail')).toBe(true);
      // One body memorized for every task: delivered, never right for fresh inputs.
      expect(outcomes.constant?.map((o) => [o.delivered, o.known_answer])).toEqual(
        Array(3).fill([true, 'fail']),
      );
      expect(outcomes['no-delivery']?.map((o) => [o.delivered, o.why])).toEqual([
        [false, 'empty_body'],
        // Garbage text: not the JSON every check reads.
        [false, 'not_json'],
        [false, 'bad_status'],
      ]);
    }
    expect(before - (await world.chain.balanceOf(buyer))).toBe(settledTotal);
  });

  it('refuses the expensive seller before signing when the budget cannot cover it', async () => {
    const task = tasks[0] as Task;
    const client = payer(1, '0.49');
    const { calls, seller } = await payTimes(client, task, 'expensive', 1);
    expect(calls[0]?.call).toMatchObject({ kind: 'not_paid', why: 'budget' });
    expect(await world.chain.balanceOf(seller.payTo as `0x${string}`)).toBe(0n);
    expect(client.budget().committed).toBe(0n);
  });
});
