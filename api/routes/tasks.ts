/**
 * `GET /v1/tasks` (docs/api.md §4): the task catalog, `data/tasks.json`, validated once at load. The known answers stay out
 * of the answer (`data/README.md` says why); lookups accept exactly these names.
 */
import type { H3 } from 'h3';
import { type PublicTask, parseTasks, publicTask, type Task } from '../../core/tasks.ts';
import catalog from '../../data/tasks.json' with { type: 'json' };
import type { AppDeps } from '../deps.ts';

/** The checked-in task catalog; a malformed file stops the service at start-up, never mid-request. */
export const TASKS: readonly Task[] = load(catalog);

/** The task names of the checked-in catalog. */
export const TASK_NAMES: readonly string[] = TASKS.map((task) => task.name);

const PUBLIC: PublicTask[] = TASKS.map(publicTask);

/**
 * Every task a lookup accepts: the checked-in catalog, then the tasks of published known-answer runs that it does
 * not name (a run may bring its own task file, `npm run known-answers -- --tasks`).
 */
export function publishedTasks(deps: Pick<AppDeps, 'paidCalls'>): PublicTask[] {
  const fromRuns = [...(deps.paidCalls?.tasks().values() ?? [])].filter(
    (task) => !TASK_NAMES.includes(task.name),
  );
  return [...PUBLIC, ...fromRuns];
}

/** Registers `GET /v1/tasks`. */
export function taskRoutes(app: H3, deps: Pick<AppDeps, 'paidCalls'>): void {
  app.get('/v1/tasks', async (event) => {
    await deps.paidCalls?.refresh();
    event.res.headers.set('cache-control', 'public, max-age=300');
    return { tasks: publishedTasks(deps) };
  });
}

function load(input: unknown): Task[] {
  const parsed = parseTasks(input);
  if (!parsed.ok) throw new Error(`[spotcheck] data/tasks.json: ${parsed.message}`);
  return parsed.value;
}
