/**
 * Sellers for the known-answer calls (issue 8 item 4): per sandbox task, six sellers built with the official SDK
 * (`@x402/hono`) that behave in known ways once paid, each paid into its own wallet so a test can match every
 * wallet's balance on chain against the receipts. The task file naming them is `sandboxTasks(urls)`.
 *
 * | behaviour      | price  | once paid                                                                     |
 * | -------------- | ------ | ----------------------------------------------------------------------------- |
 * | `right`        | $0.02  | the known answer                                                              |
 * | `right-cheap`  | $0.01  | the known answer (cheaper among equals ranks first)                           |
 * | `sometimes`    | $0.01  | the known answer, except every 3rd paid call (3, 6, …) a wrong one            |
 * | `wrong`        | $0.01  | a well-formed wrong answer                                                    |
 * | `no-delivery`  | $0.01  | settles, then in turn: 200 empty, 200 HTML garbage, 500 (all after settlement) |
 * | `expensive`    | $0.50  | the known answer, above any sensible `max_price`                              |
 */
import type { FacilitatorClient } from '@x402/core/server';
import type { Context, Hono } from 'hono';
import type { Task } from '../../core/tasks.ts';
import { type Address, BASE } from './constants.ts';
import { buildSdkApp } from './sdk.ts';
import type { SellerSpec } from './types.ts';

export const BEHAVIOURS = ['right', 'right-cheap', 'sometimes', 'wrong', 'no-delivery', 'expensive'] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];

const PRICES: Record<Behaviour, string> = {
  right: '$0.02',
  'right-cheap': '$0.01',
  sometimes: '$0.01',
  wrong: '$0.01',
  'no-delivery': '$0.01',
  expensive: '$0.50',
};

/** A sandbox task: its request and check (as a task file has them) and what a right or wrong seller answers. */
type SandboxTask = {
  task: Omit<Task, 'candidates'>;
  path: string;
  right: () => unknown;
  wrong: () => unknown;
};

const TASKS: SandboxTask[] = [
  {
    task: {
      name: 'sandbox-fx',
      title: 'Sandbox exchange rate',
      description: 'EUR to USD reference rate on 2024-01-02 (sandbox sellers).',
      request: { method: 'GET', query: { base: 'EUR', quote: 'USD', date: '2024-01-02' } },
      answer_check: { pointer: '/rate', equals: 1.0956 },
      tags: ['sandbox', 'fx'],
    },
    path: '/fx',
    right: () => ({ base: 'EUR', quote: 'USD', date: '2024-01-02', rate: 1.0956 }),
    wrong: () => ({ base: 'EUR', quote: 'USD', date: '2024-01-02', rate: 1.2 }),
  },
  {
    task: {
      name: 'sandbox-sha256',
      title: 'Sandbox SHA-256',
      description: 'Hex SHA-256 of the text "abc" (sandbox sellers, POST).',
      request: { method: 'POST', body: { text: 'abc' } },
      answer_check: {
        regex: '^\\s*\\{"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"\\}',
      },
      tags: ['sandbox', 'utility'],
    },
    path: '/sha256',
    right: () => ({ sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' }),
    wrong: () => ({ sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }),
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
 * @example sandboxTasks(world.state.taskSellers).tasks[0].candidates.length // 6
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
  const answer = (c: Context) => {
    paidCalls++;
    if (behaviour === 'wrong' || (behaviour === 'sometimes' && paidCalls % 3 === 0))
      return c.json(sandbox.wrong());
    if (behaviour !== 'no-delivery') return c.json(sandbox.right());
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
