/**
 * Publishing a known-answer run (docs/data-files.md layout, kind `known-answers`): every receipt file, the receipt
 * index, the paid-call records the lookup ranks, the tasks as published (no answer checks) and `run.json`, written
 * into the work folder, then the folder renamed into `runs/` and `current.json` replaced (`io/runs/paths.ts`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { publicTask, type Task } from '../core/tasks.ts';
import { writeFileDurably } from '../io/durable-file.ts';
import { publishRun, type RunPaths, type RunPointer } from '../io/runs/paths.ts';
import type { PaidCallResult } from './known-answer-candidate.ts';

export type FinishedKnownAnswers = {
  paths: RunPaths;
  runId: string;
  startedAt: string;
  finishedAt: Date;
  baseUrl: string;
  tasks: Task[];
  checks: Array<Record<string, unknown> & { id: string }>;
  paid: PaidCallResult[];
  run: Record<string, unknown>;
};

/** Writes the run's files and publishes it; run again after a crash, it rewrites the same files. */
export async function publishKnownAnswers(run: FinishedKnownAnswers): Promise<RunPointer> {
  const dir = join(run.paths.work, run.runId);
  const receipts = [...run.checks, ...run.paid.map((p) => p.receipt)];
  // Receipt files without fsync: the journal they come from is fsynced, and the publishing rename comes after.
  await mkdir(join(dir, 'receipts'), { recursive: true });
  for (const receipt of receipts)
    await writeFile(join(dir, 'receipts', `${receipt.id}.json`), pretty(receipt));
  const index = receipts.map((r) => ({
    id: r.id,
    type: r.type,
    check_type: r.check_type,
    task: r.task,
    url: r.url,
    issued_at: r.issued_at,
    verdict: r.verdict ?? null,
    known_answer: r.known_answer ?? null,
  }));
  const paidUsd = run.paid.reduce(
    (sum, p) => sum + BigInt(p.record.settlement_tx ? p.record.price_atomic : '0'),
    0n,
  );
  await writeFileDurably(join(dir, 'receipts.ndjson'), lines(index));
  await writeFileDurably(join(dir, 'paid-calls.ndjson'), lines(run.paid.map((p) => p.record)));
  await writeFileDurably(join(dir, 'tasks.json'), pretty({ schema: 1, tasks: run.tasks.map(publicTask) }));
  const runFile = {
    schema: 1,
    run_id: run.runId,
    kind: 'known-answers',
    started_at: run.startedAt,
    finished_at: run.finishedAt.toISOString(),
    base_url: run.baseUrl,
    ...run.run,
    total_receipts: receipts.length,
    paid_calls: run.paid.length,
    settled_atomic: paidUsd.toString(),
  };
  await writeFileDurably(join(dir, 'run.json'), pretty(runFile));
  return publishRun(run.paths, run.runId, run.finishedAt);
}

function pretty(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function lines(values: unknown[]): string {
  return values.map((value) => `${JSON.stringify(value)}\n`).join('');
}
