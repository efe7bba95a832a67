/**
 * The published tasks' port: the tasks known-answer runs publish, as the instances list them. Two backends: in
 * memory, one process (`memory.ts`); and in PostgreSQL, shared by every instance so that `/v1/tasks` and a lookup's
 * `task=` agree behind a load balancer (`postgres.ts`, `DATABASE_URL`). Both pass
 * `test/integration/io/tasks.contract.test.ts`.
 */
import type { PublicTask } from '../../core/tasks.ts';

/** Tasks of published runs; a task published again keeps the copy of the newest run (run ids sort by start time). */
export type PublishedTasks = {
  /** Records the tasks of run `runId`; a task of a newer run already recorded stays. */
  publish(runId: string, tasks: readonly PublicTask[]): Promise<void>;
  /** Every recorded task, by name. */
  list(): Promise<PublicTask[]>;
};
