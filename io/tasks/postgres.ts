/**
 * The tasks known-answer runs publish, shared by every instance (`port.ts`, `DATABASE_URL`). A run is published under
 * one instance's `DATA_DIR`; the instance that takes it in records its tasks here, and every instance lists them, so
 * `/v1/tasks` and a lookup's `task=` agree behind a load balancer. A task published again keeps the copy of the newest
 * run (run ids sort by their start time), whichever instance took that run in.
 */
import type { Sql } from 'postgres';
import type { PublicTask } from '../../core/tasks.ts';
import type { PublishedTasks } from './port.ts';

/** {@link PublishedTasks} on a migrated pool, every instance's. */
export function postgresTasks(sql: Sql): PublishedTasks {
  return {
    async publish(runId, tasks) {
      if (tasks.length === 0) return;
      const rows = tasks.map((task) => ({ name: task.name, run_id: runId, task: JSON.stringify(task) }));
      await sql`INSERT INTO published_tasks ${sql(rows)} ON CONFLICT (name) DO UPDATE
        SET run_id = excluded.run_id, task = excluded.task WHERE excluded.run_id >= published_tasks.run_id`;
    },
    async list() {
      const rows = await sql`SELECT task FROM published_tasks ORDER BY name`;
      return rows.map((row) => JSON.parse(String(row.task)) as PublicTask);
    },
  };
}
