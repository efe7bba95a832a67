/**
 * Taking in published known-answer runs without a restart: when `known-answers/current.json`
 * names a run not yet taken in, every published run not yet taken in is read (its paid-call records into the store,
 * its receipts into the receipt index, its tasks into the task list). Records are idempotent by receipt id, so a
 * restart that reads every run again changes nothing. Checks of the pointer are throttled to one a second.
 * The tasks also go to the published list (`io/tasks/port.ts`; with `DATABASE_URL` the table every instance reads),
 * and each look takes in the tasks other instances recorded, so every instance lists and accepts the same tasks.
 */
import { join } from 'node:path';
import * as v from 'valibot';
import { paidCallOfLine } from '../core/catalog.ts';
import { isReceiptId } from '../core/receipt.ts';
import type { PublicTask } from '../core/tasks.ts';
import { normalizeUrl } from '../core/url.ts';
import {
  listRuns,
  publishedRunDir,
  type RunPaths,
  readJsonRecord,
  readNdjson,
  readPointer,
} from '../io/runs/paths.ts';
import type { ReceiptRow, Store } from '../io/store/port.ts';
import type { PublishedTasks } from '../io/tasks/port.ts';

export type PaidCallIntake = {
  /** Takes in what was published since the last look (at most one look a second unless `force`). */
  refresh(force?: boolean): Promise<void>;
  /** Tasks published by the runs taken in, by name (the newest run's copy wins). */
  tasks(): ReadonlyMap<string, PublicTask>;
};

export function createPaidCallIntake(deps: {
  paths: RunPaths;
  store: Store;
  /** The published tasks (this process's, or every instance's with `DATABASE_URL`). */
  published: PublishedTasks;
  monotonic: () => number;
  log: (line: string) => void;
}): PaidCallIntake {
  const taken = new Set<string>();
  const tasks = new Map<string, PublicTask>();
  let pointerRunId: string | null = null;
  let lastLook = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | null = null;

  async function look(): Promise<void> {
    const pointer = await readPointer(deps.paths).catch(() => null);
    if (pointer !== null && pointer.run_id !== pointerRunId) {
      for (const runId of await listRuns(deps.paths.runs)) {
        if (taken.has(runId) || runId > pointer.run_id) continue;
        await takeIn(runId).catch((error: unknown) =>
          deps.log(`known-answers run ${runId} not taken in: ${String(error)}`),
        );
        taken.add(runId);
      }
      pointerRunId = pointer.run_id;
    }
    // The published list holds the newest copy of every task, whichever instance took its run in. When the
    // database cannot be read, the tasks known so far stay, and the next look tries again.
    const published = await deps.published.list().catch((error: unknown) => {
      deps.log(`shared known-answer tasks not read: ${String(error)}`);
      return [];
    });
    for (const task of published) tasks.set(task.name, task);
  }

  async function takeIn(runId: string): Promise<void> {
    const dir = publishedRunDir(deps.paths, runId);
    const records = (await readNdjson(join(dir, 'paid-calls.ndjson'))).flatMap(
      (line) => paidCallOfLine(line) ?? [],
    );
    for (const record of records) await deps.store.addPaidCall(record);
    const rows: ReceiptRow[] = [];
    for (const line of await readNdjson(join(dir, 'receipts.ndjson'))) {
      const id = (line as { id?: unknown } | null)?.id;
      if (typeof id !== 'string' || !isReceiptId(id)) continue;
      const body = await readJsonRecord(join(dir, 'receipts', `${id}.json`));
      if (body !== null && body.id === id) rows.push(receiptRow(body));
    }
    deps.store.indexReceipts(rows);
    const published = v.safeParse(TasksFile, await readJsonRecord(join(dir, 'tasks.json')));
    if (!published.success) return;
    const runTasks = published.output.tasks as PublicTask[];
    for (const task of runTasks) tasks.set(task.name, task);
    await deps.published.publish(runId, runTasks);
  }

  return {
    async refresh(force = false) {
      const now = deps.monotonic();
      if (!force && now - lastLook < 1000) return running ?? undefined;
      lastLook = now;
      running ??= look().finally(() => {
        running = null;
      });
      return running;
    },
    tasks: () => tasks,
  };
}

const TasksFile = v.object({ tasks: v.array(v.looseObject({ name: v.string() })) });

/** The index row of a run's receipt: a paid call, or the `self-checked` check that approved it. */
function receiptRow(body: Record<string, unknown>): ReceiptRow {
  const text = (key: string) => (typeof body[key] === 'string' ? (body[key] as string) : null);
  const url = text('url');
  let urlNorm: string | null = null;
  try {
    urlNorm = url === null ? null : normalizeUrl(url);
  } catch {
    urlNorm = null;
  }
  return {
    id: String(body.id),
    type: body.type === 'paid-call' ? 'paid-call' : 'check',
    issuedAt: text('issued_at') ?? '',
    url,
    urlNorm,
    method: body.method === 'POST' ? 'POST' : 'GET',
    verdict: text('verdict'),
    reason: text('reason') ?? text('why'),
    checkType: 'self-checked',
    mode: 'live',
    tier: 'self',
    body,
  };
}
