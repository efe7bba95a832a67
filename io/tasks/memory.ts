/**
 * The published tasks of one process (`port.ts`): the embedded service's list, rebuilt from the runs under its
 * `DATA_DIR` at start-up.
 */
import type { PublicTask } from '../../core/tasks.ts';
import type { PublishedTasks } from './port.ts';

/** {@link PublishedTasks} in a map: per name, the copy of the newest run published. */
export function memoryTasks(): PublishedTasks {
  const byName = new Map<string, { runId: string; task: PublicTask }>();
  return {
    async publish(runId, tasks) {
      for (const task of tasks) {
        const held = byName.get(task.name);
        if (held === undefined || runId >= held.runId) byName.set(task.name, { runId, task });
      }
    },
    async list() {
      return [...byName.values()]
        .map((entry) => entry.task)
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
  };
}
