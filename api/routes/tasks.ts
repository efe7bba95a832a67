/**
 * `GET /v1/tasks` (spec §4): the task catalog, `data/tasks.json`, validated once at load. The known answers stay out
 * of the answer (`data/README.md` says why); lookups accept exactly these names.
 */
import type { H3 } from 'h3';
import { type PublicTask, parseTasks, publicTask, type Task } from '../../core/tasks.ts';
import catalog from '../../data/tasks.json' with { type: 'json' };

/** The checked-in task catalog; a malformed file stops the service at start-up, never mid-request. */
export const TASKS: readonly Task[] = load(catalog);

/** The task names lookups accept. */
export const TASK_NAMES: readonly string[] = TASKS.map((task) => task.name);

const PUBLIC: { tasks: PublicTask[] } = { tasks: TASKS.map(publicTask) };

/** Registers `GET /v1/tasks`. */
export function taskRoutes(app: H3): void {
  app.get('/v1/tasks', (event) => {
    event.res.headers.set('cache-control', 'public, max-age=300');
    return PUBLIC;
  });
}

function load(input: unknown): Task[] {
  const parsed = parseTasks(input);
  if (!parsed.ok) throw new Error(`[spotcheck] data/tasks.json: ${parsed.message}`);
  return parsed.value;
}
