/**
 * Sellers for the known-answer calls: per sandbox task, seven sellers built with the official SDK (`@x402/hono`)
 * that behave in known ways once paid, each paid into its own wallet so a test can match every wallet's balance on
 * chain against the receipts. Each call carries fresh inputs (an amount to convert, a text to hash); the right
 * sellers compute the answer from them. The task file naming them is `sandboxTasks(urls)`.
 *
 * | behaviour      | price  | once paid                                                                          |
 * | -------------- | ------ | ---------------------------------------------------------------------------------- |
 * | `right`        | $0.02  | the answer computed from the call's inputs                                         |
 * | `right-cheap`  | $0.01  | the same (cheaper among equals ranks first)                                        |
 * | `sometimes`    | $0.01  | the right answer, except every 3rd paid call (3, 6, …) a wrong one                 |
 * | `wrong`        | $0.01  | a well-formed wrong answer computed from the inputs                                |
 * | `no-delivery`  | $0.01  | settles, then in turn: 200 empty, 200 HTML garbage, 500 (all after settlement)      |
 * | `expensive`    | $0.50  | the right answer, above any sensible `max_price`                                   |
 * | `constant`     | $0.03  | one body for every call of every task: the answers to the old fixed requests       |
 */
import { createHash } from 'node:crypto';
import type { FacilitatorClient } from '@x402/core/server';
import type { Context, Hono } from 'hono';
import type { Task } from '../../core/tasks.ts';
import { type Address, BASE } from './constants.ts';
import { buildSdkApp } from './sdk.ts';
import type { SellerSpec } from './types.ts';

// `constant` comes last so the wallets of the others keep their indexes.
export const BEHAVIOURS = [
  'right',
  'right-cheap',
  'sometimes',
  'wrong',
  'no-delivery',
  'expensive',
  'constant',
] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];

const PRICES: Record<Behaviour, string> = {
  right: '$0.02',
  'right-cheap': '$0.01',
  sometimes: '$0.01',
  wrong: '$0.01',
  'no-delivery': '$0.01',
  expensive: '$0.50',
  constant: '$0.03',
};

/** The rate the sandbox's exchange-rate task knows (ECB reference, EUR to USD, 2024-01-02). */
const EUR_USD_2024_01_02 = 1.0956;

/**
 * The one body the `constant` sellers answer: it passed both sandbox tasks when their requests were fixed and
 * their checks searched the whole body (the rate, a converted amount, and the SHA-256 of "abc").
 */
export const CONSTANT_BODY = {
  rate: EUR_USD_2024_01_02,
  amount: 1000,
  converted: 1095.6,
  sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
};

/** A sandbox task: its inputs, request and checks (as a task file has them) and what a right or wrong seller says. */
type SandboxTask = {
  task: Omit<Task, 'candidates'>;
  path: string;
  /** The answer computed from the paid request; `wrong` a well-formed wrong one. */
  answer: (c: Context, wrong: boolean) => Promise<unknown>;
};

const TASKS: SandboxTask[] = [
  {
    task: {
      name: 'sandbox-fx',
      title: 'Sandbox currency conversion',
      description:
        'Converts `amount` EUR to USD at the reference rate of 2024-01-02; answers JSON {"rate","converted"} (sandbox sellers).',
      inputs: { amount: { kind: 'decimal', min: 1, max: 10000, places: 2 } },
      request: {
        method: 'GET',
        query: { base: 'EUR', quote: 'USD', date: '2024-01-02', amount: '{amount}' },
      },
      answer: [
        { pointer: '/rate', equals: EUR_USD_2024_01_02 },
        {
          pointer: '/converted',
          near: { product: [{ input: 'amount' }, EUR_USD_2024_01_02] },
          tolerance: 0.01,
        },
      ],
      tags: ['sandbox', 'fx'],
    },
    path: '/fx',
    answer: async (c, wrong) => {
      const amount = Number(c.req.query('amount'));
      const rate = wrong ? 1.2 : EUR_USD_2024_01_02;
      const converted = Math.round(amount * rate * 100) / 100;
      return { base: 'EUR', quote: 'USD', date: '2024-01-02', amount, rate, converted };
    },
  },
  {
    task: {
      name: 'sandbox-sha256',
      title: 'Sandbox SHA-256',
      description: 'Hex SHA-256 of the UTF-8 `text` posted; answers JSON {"sha256"} (sandbox sellers, POST).',
      inputs: { text: { kind: 'text', length: 24 } },
      request: { method: 'POST', body: { text: '{text}' } },
      answer: [{ pointer: '/sha256', equals: { sha256: { input: 'text' } } }],
      tags: ['sandbox', 'utility'],
    },
    path: '/sha256',
    answer: async (c, wrong) => {
      const body = (await c.req.json().catch(() => ({}))) as { text?: unknown };
      const text = typeof body.text === 'string' ? body.text : '';
      return {
        sha256: createHash('sha256')
          .update(wrong ? `${text}\n` : text)
          .digest('hex'),
      };
    },
  },
];

/** Names of the task sellers, `<task>/<behaviour>`. */
export const TASK_SELLER_NAMES: readonly string[] = TASKS.flatMap(({ task }) =>
  BEHAVIOURS.map((behaviour) => `${task.name}/${behaviour}`),
);

/**
 * The wallet a task seller is paid into: distinct per seller, never used by anything else in the sandbox.
 * @example taskSellerWallet(0) // '0x7a5c000000000000000000000000000000000001'
 */
export function taskSellerWallet(index: number): Address {
  return `0x7a5c${(index + 1).toString(16).padStart(36, '0')}`;
}

/** The wallet of each task seller by name. */
export const TASK_SELLER_WALLETS: Readonly<Record<string, Address>> = Object.fromEntries(
  TASK_SELLER_NAMES.map((name, index) => [name, taskSellerWallet(index)]),
);

/** Builds every task seller (not yet listening). */
export async function buildTaskSellers(
  facilitators: FacilitatorClient[],
): Promise<Array<[string, SellerSpec]>> {
  const specs: Array<Promise<[string, SellerSpec]>> = [];
  for (const sandbox of TASKS) {
    for (const behaviour of BEHAVIOURS) {
      const name = `${sandbox.task.name}/${behaviour}`;
      const payTo = TASK_SELLER_WALLETS[name] as Address;
      specs.push(buildSeller(sandbox, behaviour, payTo, facilitators).then((spec) => [name, spec]));
    }
  }
  return Promise.all(specs);
}

/**
 * The task file of the sandbox sellers (the shape of `data/tasks.json`), candidates taken from `urls` by name.
 * @example sandboxTasks(world.state.taskSellers).tasks[0].candidates.length // 7
 */
export function sandboxTasks(urls: Readonly<Record<string, string>>): { tasks: Task[] } {
  return {
    tasks: TASKS.map(({ task }) => ({
      ...task,
      candidates: BEHAVIOURS.flatMap((behaviour) => urls[`${task.name}/${behaviour}`] ?? []),
    })),
  };
}

function buildSeller(
  sandbox: SandboxTask,
  behaviour: Behaviour,
  payTo: Address,
  facilitators: FacilitatorClient[],
): Promise<SellerSpec> {
  const method = sandbox.task.request.method;
  const route = `${method} ${sandbox.path}`;
  let paidCalls = 0;
  const answer = async (c: Context) => {
    paidCalls++;
    if (behaviour === 'constant') return c.json(CONSTANT_BODY);
    if (behaviour === 'wrong' || (behaviour === 'sometimes' && paidCalls % 3 === 0))
      return c.json(await sandbox.answer(c, true));
    if (behaviour !== 'no-delivery') return c.json(await sandbox.answer(c, false));
    const turn = paidCalls % 3;
    if (turn === 1) return c.body('', 200);
    if (turn === 2) return c.html('<html><body>thanks for your payment</body></html>', 200);
    // A 2xx the payment middleware settles, turned into a 500 by `before` once the money has moved.
    return c.body('', 200, { 'x-sandbox-fail-after-settle': '1' });
  };
  return buildSdkApp(
    {
      path: sandbox.path,
      routes: {
        [route]: {
          accepts: { scheme: 'exact', network: BASE, payTo, price: PRICES[behaviour] },
          description: sandbox.task.description,
          mimeType: 'application/json',
        },
      },
      before: (app: Hono) =>
        app.use(async (c, next) => {
          await next();
          if (c.res.headers.get('x-sandbox-fail-after-settle') !== '1') return;
          // Hono copies the old answer's headers (PAYMENT-RESPONSE among them) onto the new one.
          c.res = new Response('internal error', { status: 500 });
          c.res.headers.delete('x-sandbox-fail-after-settle');
        }),
      build: (app: Hono) => {
        if (method === 'GET') app.get(sandbox.path, answer);
        else app.post(sandbox.path, answer);
      },
    },
    facilitators,
  );
}
