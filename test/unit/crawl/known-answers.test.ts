/**
 * The known-answer run with fakes at its seams (prober, paying client): only `pay` verdicts are paid, at most n
 * times; a run stopped mid-way resumes without paying any call twice and with what was signed still counted.
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
import { runPaths } from '../../../io/crawl-runs.ts';
import type { PaidCall, PayingClient } from '../../../io/paying-client.ts';
import { PAY_TO } from '../../fixtures/challenge.ts';
import { outcomeOf402 } from '../../fixtures/probe.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const TASK: Task = {
  name: 'fx',
  description: 'A task.',
  request: { method: 'GET', query: { base: 'EUR' } },
  answer_check: { pointer: '/rate', equals: 1.09 },
  candidates: ['https://good.example/fx', 'https://free.example/fx'],
};

/** good.example answers the SDK-shaped 402 ($0.01 to PAY_TO); free.example answers 200 (skip, no_paywall). */
function prober() {
  return {
    async probe(url: string): Promise<ProbeOutcome> {
      if (url.startsWith('https://good.example')) return outcomeOf402(url);
      const outcome = outcomeOf402(url);
      if (outcome.kind !== 'response') throw new Error('fixture');
      return { ...outcome, response: { ...outcome.response, status: 200, headers: {} } };
    },
  };
}

/** A paying client that answers right, counts calls, and dies (throws) on call number `dieAt`. */
function payer(paid: string[], dieAt = Number.POSITIVE_INFINITY) {
  return (start: Budget): PayingClient => {
    let budget = start;
    return {
      budget: () => budget,
      async pay(request, terms) {
        if (paid.length + 1 === dieAt) throw new Error('killed');
        const decision = decideSpend(budget, terms.network, terms.amount_atomic);
        if (!decision.ok) return { kind: 'not_paid', why: 'budget', message: decision.message };
        budget = commitSpend(budget, decision.cost);
        paid.push(request.url);
        const call: PaidCall = {
          kind: 'paid',
          terms,
          payer: '0x2222222222222222222222222222222222222222',
          nonce: `0x${'00'.repeat(31)}${String(paid.length).padStart(2, '0')}`,
          status: 200,
          text: '{"rate":1.09}',
          truncated: false,
          settlement_tx: `0x${String(paid.length).padStart(64, '0')}`,
          error: null,
        };
        return call;
      },
    };
  };
}

function deps(dataDir: string, payerFor: KnownAnswerDeps['payerFor'], log: string[] = []): KnownAnswerDeps {
  let id = 0;
  return {
    paths: runPaths(dataDir, 'known-answers'),
    prober: prober(),
    payerFor,
    signer: { kid: 'test', sign: () => new Uint8Array(64) },
    now: () => new Date('2026-11-24T01:00:00Z'),
    random: (n) => {
      id++;
      return new Uint8Array(n).map((_, i) => (id * 7 + i) & 0xff);
    },
    baseUrl: 'https://spot.example',
    monotonic: () => 0,
    progressOut: { write: () => true },
    log: (line) => log.push(line),
  };
}

describe('runKnownAnswers', () => {
  it('pays only candidates checked pay, n times each, and publishes the records', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const paid: string[] = [];
    const log: string[] = [];
    const result = await runKnownAnswers(deps(dataDir, payer(paid), log), {
      tasks: [TASK],
      n: 3,
      budgetUsd: '1',
      resume: false,
    });
    expect(paid).toEqual(Array(3).fill('https://good.example/fx?base=EUR'));
    expect(log.join('\n')).toMatch(/free\.example\/fx: skip \(no_paywall\), not paid/);
    const runDir = join(dataDir, 'known-answers', 'runs', result.runId);
    const records = (await readFile(join(runDir, 'paid-calls.ndjson'), 'utf8')).trim().split('\n');
    expect(records.map((line) => JSON.parse(line))).toMatchObject(
      Array(3).fill({ endpoint_url: 'https://good.example/fx', known_answer: 'pass', pay_to: PAY_TO }),
    );
    const published = JSON.parse(await readFile(join(runDir, 'tasks.json'), 'utf8'));
    expect(JSON.stringify(published)).not.toContain('answer_check');
  });

  it('resumes a stopped run without paying any call twice, counting what was signed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ka-unit-'));
    dirs.push(dataDir);
    const paid: string[] = [];
    const options = { tasks: [TASK], n: 4, budgetUsd: '0.035', resume: false };
    await expect(runKnownAnswers(deps(dataDir, payer(paid, 3)), options)).rejects.toThrow('killed');
    expect(paid).toHaveLength(2);
    let budgetAtResume: Budget | null = null;
    const resumed = await runKnownAnswers(
      deps(dataDir, (budget) => {
        budgetAtResume = budget;
        return payer(paid)(budget);
      }),
      { ...options, resume: true },
    );
    // Call 3 was journaled before the kill: never paid again. It counts as signed: 3 × $0.01 of $0.035 committed,
    // so call 4 does not fit and is refused before signing.
    expect(budgetAtResume).toMatchObject({ committed: 3n * 10n ** 16n });
    expect(paid).toHaveLength(2);
    expect(resumed.paid).toBe(2);
    expect(resumed.refused).toBe(1);
  });
});
