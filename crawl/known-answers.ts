/**
 * A known-answer run (docs/api.md §1.4): for each task, each candidate checked first, then paid up to n times within the
 * budget; every step a signed receipt. Written like a crawl run (docs/data-files.md): its own work folder under
 * `DATA_DIR/known-answers/`, a journal fsynced before each payment is signed and after it, `--resume` that never
 * pays the same call twice, and an atomic publish the running server takes in. The run pays from a wallet of its
 * own (`io/runs/wallet.ts`), funded from the configured payer before the first call.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { type Budget, commitSpend, createBudget, decideSpend } from '../core/budget.ts';
import { parseTasks, type Task } from '../core/tasks.ts';
import { writeFileDurably } from '../io/durable-file.ts';
import { openRunJournal, type RunJournal, readRunJournal } from '../io/runs/journal.ts';
import { listRuns, newRunId, type RunPaths, type RunPointer } from '../io/runs/paths.ts';
import type { RunWallets, SignedFunding } from '../io/runs/wallet.ts';
import {
  type CandidateCheck,
  type CandidateDeps,
  checkCandidate,
  type PaidCallResult,
  payCandidate,
} from './known-answer-candidate.ts';
import { fundingAtomic, fundRun } from './known-answers-funding.ts';
import { publishKnownAnswers } from './known-answers-publish.ts';
import { createProgress, type ProgressOut } from './progress.ts';

export type KnownAnswerDeps = Omit<CandidateDeps, 'runId' | 'payer' | 'catalog'> & {
  paths: RunPaths;
  /** The run's own wallet: funded for the budget, then paying with the budget left (after a resume, less what the
   * journal already signed). */
  wallets: RunWallets;
  monotonic: () => number;
  progressOut: ProgressOut;
  log: (line: string) => void;
};

export type KnownAnswerOptions = {
  /** Tasks to run (already filtered by `--task`); ignored on resume, which reads the run's own copy. */
  tasks: Task[];
  /** Every task of the file (default `tasks`): an answer that also passes another of them fails. */
  catalog?: Task[];
  n: number;
  budgetUsd: string;
  resume: boolean;
};

export type KnownAnswerResult = {
  pointer: RunPointer;
  runId: string;
  paid: number;
  refused: number;
  /** What was signed, in 10^-18 USD (`core/budget.ts`). */
  committed: bigint;
  /** The run's own paying wallet, and the transaction that funded it (null for a zero budget). */
  payer: `0x${string}`;
  fundingTx: string | null;
};

/** The run's plan; `others` are the tasks of the file not run, judged against all the same. */
type PlanFile = { started_at: string; n: number; budget_usd: string; tasks: Task[]; others: Task[] };

/** Runs (or resumes) a known-answer run and publishes it. */
export async function runKnownAnswers(
  deps: KnownAnswerDeps,
  options: KnownAnswerOptions,
): Promise<KnownAnswerResult> {
  const { runId, plan } = await startOrResume(deps, options);
  const journalPath = join(deps.paths.work, runId, 'calls.ndjson');
  const state = replay(await readRunJournal(journalPath));
  const budget = createBudget(plan.budget_usd);
  if (budget === null) throw new Error(`not a USD amount: ${plan.budget_usd}`);
  const address = deps.wallets.address(runId);
  deps.log(`paying from ${address}, a wallet of run ${runId} only`);
  const total = plan.tasks.reduce((sum, task) => sum + task.candidates.length * plan.n, 0);
  const progress = createProgress({
    label: 'known-answers',
    total,
    out: deps.progressOut,
    now: deps.monotonic,
    alreadyDone: state.started.size,
    names: { pay: 'pass', skip: 'fail', recheck: 'not paid' },
  });
  const journal = await openRunJournal(journalPath);
  let fundingTx: string | null = state.funded;
  let committed = state.committed;
  let refused = 0;
  try {
    const payer = deps.wallets.payer(runId, commitSpend(budget, state.committed));
    const run: RunContext = {
      deps,
      candidateDeps: { ...deps, runId, payer, catalog: [...plan.tasks, ...plan.others] },
      journal,
      state,
      n: plan.n,
      progress,
      // Funded before the first payment only: a run that pays nobody moves no money.
      funded: async () => {
        fundingTx ??= await fundRun({ ...deps, journal, runId, state }, fundingAtomic(budget));
      },
      refused: 0,
    };
    for (const task of plan.tasks)
      for (const candidate of task.candidates) await runCandidate(run, task, candidate);
    committed = payer.budget().committed;
    refused = run.refused;
  } finally {
    await journal.close();
  }
  progress.finish();
  const pointer = await publishKnownAnswers({
    paths: deps.paths,
    runId,
    startedAt: plan.started_at,
    finishedAt: deps.now(),
    baseUrl: deps.baseUrl,
    tasks: plan.tasks,
    checks: [...state.checks.values()].map((c) => c.receipt),
    paid: [...state.paid.values()],
    run: {
      n: plan.n,
      budget_usd: plan.budget_usd,
      resumed: options.resume ? 1 : 0,
      payer: address,
      funding_tx: fundingTx,
    },
  });
  return { pointer, runId, paid: state.paid.size, refused, committed, payer: address, fundingTx };
}

/** One run in progress: what the steps of every candidate share. */
type RunContext = {
  readonly deps: KnownAnswerDeps;
  readonly candidateDeps: CandidateDeps;
  readonly journal: RunJournal;
  readonly state: Replayed;
  /** Paid calls per candidate. */
  readonly n: number;
  readonly progress: ReturnType<typeof createProgress>;
  /** Funds the run's wallet, once, before its first payment. */
  readonly funded: () => Promise<void>;
  /** Calls refused before anything was signed. */
  refused: number;
};

/** One candidate of a task: checked once (journaled), then paid up to `n` times when its check names terms. */
async function runCandidate(run: RunContext, task: Task, candidate: string): Promise<void> {
  const { deps, journal, state, progress } = run;
  const key = `${task.name} ${candidate}`;
  let check = state.checks.get(key);
  if (check === undefined) {
    check = await checkCandidate(run.candidateDeps, task, candidate);
    await journal.append({ t: 'check', k: key, check });
    state.checks.set(key, check);
  }
  const terms = check.terms;
  if (terms === null) {
    deps.log(`${task.name}: ${candidate}: ${check.verdict} (${check.reason}), not paid`);
    for (let i = 0; i < run.n; i++) if (!state.started.has(`${key} ${i}`)) progress.tick('recheck');
    return;
  }
  for (let i = 0; i < run.n; i++) {
    const callKey = `${key} ${i}`;
    if (state.started.has(callKey)) continue;
    await run.funded();
    // Journaled before anything is signed: after a crash this call is never paid again.
    await journal.append({ t: 'pay', k: callKey, network: terms.network, amount: terms.amount_atomic });
    state.started.add(callKey);
    const result = await payCandidate(run.candidateDeps, task, candidate, { ...check, terms });
    if ('refused' in result) {
      await journal.append({ t: 'refused', k: callKey, why: result.why, message: result.refused });
      deps.log(`${task.name}: ${candidate}: not paid: ${result.refused}`);
      run.refused++;
      progress.tick('recheck');
      for (let j = i + 1; j < run.n; j++) if (!state.started.has(`${key} ${j}`)) progress.tick('recheck');
      return;
    }
    await journal.append({ t: 'paid', k: callKey, paid: result });
    state.paid.set(callKey, result);
    progress.tick(result.record.known_answer === 'pass' ? 'pay' : 'skip');
  }
}

async function startOrResume(deps: KnownAnswerDeps, options: KnownAnswerOptions) {
  if (options.resume) {
    const runId = (await listRuns(deps.paths.work)).at(-1);
    if (runId === undefined) throw new Error('no unfinished known-answer run to resume');
    deps.log(`resuming run ${runId}`);
    return { runId, plan: await readPlan(join(deps.paths.work, runId, 'plan.json')) };
  }
  const runId = newRunId(deps.now(), deps.random);
  const run = new Set(options.tasks.map((task) => task.name));
  const plan: PlanFile = {
    started_at: deps.now().toISOString(),
    n: options.n,
    budget_usd: options.budgetUsd,
    tasks: options.tasks,
    others: (options.catalog ?? []).filter((task) => !run.has(task.name)),
  };
  await mkdir(join(deps.paths.work, runId), { recursive: true });
  await writeFileDurably(join(deps.paths.work, runId, 'plan.json'), JSON.stringify(plan));
  deps.log(`run ${runId}: ${plan.tasks.length} tasks, n ${plan.n}, budget USD ${plan.budget_usd}`);
  return { runId, plan };
}

type Replayed = {
  checks: Map<string, CandidateCheck>;
  started: Set<string>;
  paid: Map<string, PaidCallResult>;
  committed: bigint;
  /** The funding signed and journaled, and its transaction once it landed. */
  funding: SignedFunding | null;
  funded: string | null;
};

/** The journal's checks, started and finished calls, and what was signed (refused calls signed nothing). */
function replay(lines: unknown[]): Replayed {
  const state: Replayed = {
    checks: new Map(),
    started: new Set(),
    paid: new Map(),
    committed: 0n,
    funding: null,
    funded: null,
  };
  const intents = new Map<string, { network: string; amount: string }>();
  for (const line of lines) {
    const r = line as {
      t?: string;
      k?: string;
      check?: CandidateCheck;
      paid?: PaidCallResult;
      funding?: SignedFunding;
    } & Record<string, unknown>;
    if (typeof r.k !== 'string') continue;
    if (r.t === 'fund' && r.funding) state.funding = r.funding;
    if (r.t === 'funded' && typeof r.tx === 'string') state.funded = r.tx;
    if (r.t === 'check' && r.check) state.checks.set(r.k, r.check);
    if (r.t === 'pay') {
      state.started.add(r.k);
      intents.set(r.k, { network: String(r.network), amount: String(r.amount) });
    }
    if (r.t === 'refused') intents.delete(r.k);
    if (r.t === 'paid' && r.paid) state.paid.set(r.k, r.paid);
  }
  const zero: Budget = { limit: 2n ** 255n, committed: 0n };
  for (const intent of intents.values()) {
    const decision = decideSpend(zero, intent.network, intent.amount);
    if (decision.ok) state.committed += decision.cost;
  }
  return state;
}

const PlanSchema = v.object({
  started_at: v.string(),
  n: v.pipe(v.number(), v.integer(), v.minValue(1)),
  budget_usd: v.string(),
  tasks: v.unknown(),
  others: v.optional(v.unknown(), []),
});

async function readPlan(path: string): Promise<PlanFile> {
  const parsed = v.safeParse(PlanSchema, JSON.parse(await readFile(path, 'utf8')));
  if (!parsed.success) throw new Error(`${path} is not a known-answer plan: ${parsed.issues[0].message}`);
  const tasks = parseTasks({ tasks: parsed.output.tasks });
  if (!tasks.ok) throw new Error(`${path}: ${tasks.message}`);
  const others =
    Array.isArray(parsed.output.others) && parsed.output.others.length > 0
      ? parseTasks({ tasks: parsed.output.others })
      : { ok: true as const, value: [] };
  if (!others.ok) throw new Error(`${path}: others: ${others.message}`);
  return { ...parsed.output, tasks: tasks.value, others: others.value };
}
