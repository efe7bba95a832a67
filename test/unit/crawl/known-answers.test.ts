/**
 * The known-answer run with fakes at its seams (prober, run wallets): only `pay` verdicts are paid, at most n times,
 * each call with fresh inputs and judged against the whole file; the run's own wallet is funded once, before the
 * first payment; a run stopped mid-way resumes without paying any call or funding twice, with what was signed
 * still counted.
 */
import { mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Budget, commitSpend, decideSpend } from '../../../core/budget.ts';
import type { ProbeOutcome } from '../../../core/model.ts';
import type { Task } from '../../../core/tasks.ts';
import { type KnownAnswerDeps, runKnownAnswers } from '../../../crawl/known-answers.ts';
import type { PaidCall, PaidRequest, PayingClient } from '../../../io/probe/paying-client.ts';
import { runPaths } from '../../../io/runs/paths.ts';
import type { FundingOutcome, RunWallets, SignedFunding } from '../../../io/runs/wallet.ts';
import { PAY_TO } from '../../fixtures/challenge.ts';
import { outcomeOf402 } from '../../fixtures/probe.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const TASK: Task = {
  name: 'fx',
  description: 'A task.',
  inputs: { amount: { kind: 'integer', min: 1, max: 100_000 } },
  request: { method: 'GET', query: { base: 'EUR', amount: '{amount}' } },
  answer: [{ pointer: '/converted', equals: { product: [{ input: 'amount' }, 2] } }],
  candidates: ['https://good.example/fx', 'https://free.example/fx'],
};
/** A task of the file that is not run, with a loose check: an answer that also passes it fails. */
const AT_LEAST: Task = {
  name: 'at-least',
  description: 'Another task.',
  inputs: { n: { kind: 'integer', min: 1, max: 100_000 } },
  request: { method: 'GET', query: { n: '{n}' } },
  answer: [{ pointer: '/big', min: { input: 'n' } }],
  candidates: [],
};

/** good.example answers the SDK-shaped 402 ($0.01 to PAY_TO); free.example answers 200 (skip, no_paywall). */
function prober(probed: string[] = []) {
  return {
    async probe(url: string): Promise<ProbeOutcome> {
      probed.push(url);
      if (url.startsWith('https://good.example')) return outcomeOf402(url);
      const outcome = outcomeOf402(url);
      if (outcome.kind !== 'response') throw new Error('fixture');
      return { ...outcome, response: { ...outcome.response, status: 200, headers: {} } };
    },
  };
}

type Seller = (request: PaidRequest) => unknown;
/** Doubles the amount asked, as a right seller of TASK does. */
const right: Seller = (request) => ({
  converted: 2 * Number(new URL(request.url).searchParams.get('amount')),
});

/** Run wallets whose paying client answers with `seller`, and that die (throw) on payment number `dieAt`. */
function wallets(
  state: { paid: string[]; payers: string[]; signed: SignedFunding[]; sent: string[]; drop?: number },
  options: { seller?: Seller; dieAt?: number } = {},
): RunWallets {
  const address = (runId: string) =>
    `0x${Buffer.from(runId).toString('hex').slice(-40).padStart(40, '0')}` as `0x${string}`;
  return {
    address,
    payer(runId, start: Budget): PayingClient {
      let budget = start;
      return {
        budget: () => budget,
        async pay(request, terms) {
          if (state.paid.length + 1 === options.dieAt) throw new Error('killed');
          const decision = decideSpend(budget, terms.network, terms.amount_atomic);
          if (!decision.ok) return { kind: 'not_paid', why: 'budget', message: decision.message };
          budget = commitSpend(budget, decision.cost);
          state.paid.push(request.url);
          state.payers.push(address(runId));
          const call: PaidCall = {
            kind: 'paid',
            terms,
            payer: address(runId),
            nonce: `0x${'00'.repeat(31)}${String(state.paid.length).padStart(2, '0')}`,
            status: 200,
            text: JSON.stringify((options.seller ?? right)(request)),
            truncated: false,
            settlement_tx: `0x${String(state.paid.length).padStart(64, '0')}`,
            error: null,
          };
          return call;
        },
      };
    },
    async signFunding(runId, atomic) {
      const n = state.signed.length + 1;
      const signed = {
        to: address(runId),
        amount_atomic: atomic.toString(),
        tx: `0x${String(n).padStart(64, 'f')}`,
        raw: `0x0${n}`,
      } as SignedFunding;
      state.signed.push(signed);
      return signed;
    },
    async sendFunding(funding): Promise<FundingOutcome> {
      state.sent.push(funding.tx);
      if (state.drop !== undefined && state.drop-- > 0) return { kind: 'dropped' };
      return { kind: 'landed' };
    },
  };
}

const fresh = () => ({
  paid: [] as string[],
  payers: [] as string[],
  signed: [] as SignedFunding[],
  sent: [] as string[],
});

// Shared by every run of the file, so two runs of one test get two run ids.
let id = 0;
let clock = 0;

function deps(
  dataDir: string,
  runWallets: RunWallets,
  log: string[] = [],
  probed: string[] = [],
): KnownAnswerDeps {
  return {
    paths: runPaths(dataDir, 'known-answers'),
    prober: prober(probed),
    wallets: runWallets,
    signer: { kid: 'test', sign: () => new Uint8Array(64) },
    now: () => new Date(Date.UTC(2026, 10, 24, 1, 0, clock++)),
    random: (n) => {
      id++;
      return new Uint8Array(n).map((_, i) => (id * 7 + i * 13) & 0xff);
    },
    baseUrl: 'https://spot.example',
    monotonic: () => 0,
    progressOut: { write: () => true },
    log: (line) => log.push(line),
  };
}

async function records(dataDir: string, runId: string) {
  const runDir = join(dataDir, 'known-answers', 'runs', runId);
  const text = await readFile(join(runDir, 'paid-calls.ndjson'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('runKnownAnswers', () => {
  it('pays only candidates checked pay, n times each with fresh inputs, and publishes the records', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const state = fresh();
    const log: string[] = [];
    const result = await runKnownAnswers(deps(dataDir, wallets(state), log), {
      tasks: [TASK],
      n: 3,
      budgetUsd: '1',
      resume: false,
    });
    expect(state.paid).toHaveLength(3);
    expect(state.paid.every((url) => /^https:\/\/good\.example\/fx\?base=EUR&amount=\d+$/.test(url))).toBe(
      true,
    );
    expect(new Set(state.paid).size).toBe(3);
    expect(log.join('\n')).toMatch(/free\.example\/fx: skip \(no_paywall\), not paid/);
    expect(await records(dataDir, result.runId)).toMatchObject(
      Array(3).fill({ endpoint_url: 'https://good.example/fx', known_answer: 'pass', pay_to: PAY_TO }),
    );
    const runDir = join(dataDir, 'known-answers', 'runs', result.runId);
    const published = await readFile(join(runDir, 'tasks.json'), 'utf8');
    expect(published).not.toContain('"answer"');
    expect(published).not.toContain('"inputs"');
    const receipt = JSON.parse(
      await readFile(
        join(runDir, 'receipts', `${(await records(dataDir, result.runId))[0].receipt_id}.json`),
        'utf8',
      ),
    );
    expect(receipt).toMatchObject({
      seed: expect.stringMatching(/^[0-9a-f]{32}$/),
      inputs: { amount: expect.any(Number) },
      payer: result.payer,
    });
  });

  it('funds the run wallet once, before the first payment, and pays from it; another run, another wallet', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const state = fresh();
    const options = { tasks: [TASK], n: 2, budgetUsd: '0.5', resume: false };
    const first = await runKnownAnswers(deps(dataDir, wallets(state)), options);
    expect(state.signed).toEqual([
      { to: first.payer, amount_atomic: '500000', tx: expect.any(String), raw: expect.any(String) },
    ]);
    expect(state.sent).toEqual([state.signed[0]?.tx]);
    expect(first.fundingTx).toBe(state.signed[0]?.tx);
    expect(state.payers).toEqual([first.payer, first.payer]);
    const run = JSON.parse(
      await readFile(join(dataDir, 'known-answers', 'runs', first.runId, 'run.json'), 'utf8'),
    );
    expect(run).toMatchObject({ payer: first.payer, funding_tx: first.fundingTx });

    const second = await runKnownAnswers(deps(dataDir, wallets(state)), options);
    expect(second.runId).not.toBe(first.runId);
    expect(second.payer).not.toBe(first.payer);
    expect(state.signed.map((s) => s.to)).toEqual([first.payer, second.payer]);
    expect(state.payers.slice(2)).toEqual([second.payer, second.payer]);
  });

  it('funds nothing when nothing is paid, and signs a dropped funding again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const none = fresh();
    const freeOnly = { ...TASK, candidates: ['https://free.example/fx'] };
    const result = await runKnownAnswers(deps(dataDir, wallets(none)), {
      tasks: [freeOnly],
      n: 2,
      budgetUsd: '1',
      resume: false,
    });
    expect([none.signed, none.sent, result.fundingTx]).toEqual([[], [], null]);

    const dropped = { ...fresh(), drop: 1 };
    const log: string[] = [];
    const again = await runKnownAnswers(deps(dataDir, wallets(dropped), log), {
      tasks: [TASK],
      n: 1,
      budgetUsd: '1',
      resume: false,
    });
    expect(dropped.signed).toHaveLength(2);
    expect(dropped.sent).toEqual(dropped.signed.map((s) => s.tx));
    expect(again.fundingTx).toBe(dropped.signed[1]?.tx);
    expect(log.join('\n')).toMatch(/was dropped .* signing it again/);
  });

  it('fails an answer that also passes another task of the file, and never lets the probe see a paid input', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const good = { ...TASK, candidates: ['https://good.example/fx'] };
    const plan = { tasks: [good], catalog: [good, AT_LEAST], n: 2, budgetUsd: '1', resume: false };
    const state = fresh();
    const probed: string[] = [];
    const honest = await runKnownAnswers(deps(dataDir, wallets(state), [], probed), plan);
    expect((await records(dataDir, honest.runId)).map((r) => r.known_answer)).toEqual(['pass', 'pass']);
    // The unpaid probe drew inputs of its own: no paid call asked what the seller saw for free.
    expect(probed.filter((url) => state.paid.includes(url))).toEqual([]);

    // Right for the run's task and built to pass the other one too: it answers no task in particular.
    const greedy: Seller = (request) => ({ ...(right(request) as object), big: 1e12 });
    const both = await runKnownAnswers(deps(dataDir, wallets(fresh(), { seller: greedy })), plan);
    expect((await records(dataDir, both.runId)).map((r) => r.why)).toEqual([
      'passes_other_task',
      'passes_other_task',
    ]);
    // Judged against the run's own tasks only, the same answers pass: the file's other tasks count.
    const alone = await runKnownAnswers(deps(dataDir, wallets(fresh(), { seller: greedy })), {
      ...plan,
      catalog: [good],
    });
    expect((await records(dataDir, alone.runId)).map((r) => r.known_answer)).toEqual(['pass', 'pass']);
  });

  it('resumes a stopped run without paying any call or funding twice, counting what was signed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const state = fresh();
    const options = { tasks: [TASK], n: 4, budgetUsd: '0.035', resume: false };
    await expect(runKnownAnswers(deps(dataDir, wallets(state, { dieAt: 3 })), options)).rejects.toThrow(
      'killed',
    );
    expect(state.paid).toHaveLength(2);
    let budgetAtResume: Budget | null = null;
    const resumeWallets = wallets(state);
    const resumed = await runKnownAnswers(
      deps(dataDir, {
        ...resumeWallets,
        payer: (runId, budget) => {
          budgetAtResume = budget;
          return resumeWallets.payer(runId, budget);
        },
      }),
      { ...options, resume: true },
    );
    // Call 3 was journaled before the kill: never paid again. It counts as signed: 3 × $0.01 of $0.035 committed,
    // so call 4 does not fit and is refused before signing.
    expect(budgetAtResume).toMatchObject({ committed: 3n * 10n ** 16n });
    expect(state.paid).toHaveLength(2);
    expect(resumed.paid).toBe(2);
    expect(resumed.refused).toBe(1);
    // Funded once, by the first start: the resume found the funding landed in the journal.
    expect(state.signed).toHaveLength(1);
    expect(state.sent).toHaveLength(1);
    expect(resumed.fundingTx).toBe(state.signed[0]?.tx);
  });

  it('sends the journaled funding again after a crash before it was confirmed, never a second one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const state = fresh();
    const crashing = wallets(state);
    const options = { tasks: [TASK], n: 1, budgetUsd: '1', resume: false };
    await expect(
      runKnownAnswers(
        deps(dataDir, {
          ...crashing,
          sendFunding: async () => {
            throw new Error('killed while sending');
          },
        }),
        options,
      ),
    ).rejects.toThrow('killed while sending');
    expect(state.signed).toHaveLength(1);
    const resumed = await runKnownAnswers(deps(dataDir, wallets(state)), { ...options, resume: true });
    expect(state.signed).toHaveLength(1);
    expect(state.sent).toEqual([state.signed[0]?.tx]);
    expect(resumed.fundingTx).toBe(state.signed[0]?.tx);
    expect(resumed.paid).toBe(1);
  });
});
