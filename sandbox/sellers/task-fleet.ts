/**
 * The known-answer sellers on their loopback ports, with the task file that names them.
 */
import type { FacilitatorClient } from '@x402/core/server';
import type { Task } from '../../core/tasks.ts';
import type { Address } from './constants.ts';
import { listenSeller } from './listen.ts';
import { createOfflineFacilitator } from './offline-facilitator.ts';
import { buildTaskSellers, sandboxTasks, TASK_SELLER_WALLETS } from './task-sellers.ts';

export type TaskSellers = {
  /** `<task>/<behaviour>` → its URL and the wallet it is paid into. */
  sellers: Record<string, { url: string; payTo: Address }>;
  /** The task file (shape of `data/tasks.json`) with these sellers as candidates. */
  tasks: { tasks: Task[] };
  close(): Promise<void>;
};

/** Starts every task seller; `facilitator` settles on the sandbox chain (default: the offline facilitator). */
export async function startTaskSellers(
  options: { facilitator?: FacilitatorClient; host?: string } = {},
): Promise<TaskSellers> {
  const offline = createOfflineFacilitator();
  const facilitators = options.facilitator ? [options.facilitator, offline] : [offline];
  const specs = await buildTaskSellers(facilitators);
  const started = await Promise.allSettled(
    specs.map(async ([name, spec]) => [name, await listenSeller(spec, options.host ?? '127.0.0.1')] as const),
  );
  const up = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const closeAll = async () => {
    await Promise.allSettled(up.map(([, s]) => s.close()));
  };
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await closeAll();
    throw new Error('sandbox: the task sellers failed to start', { cause: failed.reason });
  }
  const sellers = Object.fromEntries(
    up.map(([name, s]) => [name, { url: s.url, payTo: TASK_SELLER_WALLETS[name] as Address }]),
  );
  const urls = Object.fromEntries(up.map(([name, s]) => [name, s.url]));
  let closing: Promise<void> | null = null;
  return {
    sellers,
    tasks: sandboxTasks(urls),
    close: () => {
      closing ??= closeAll();
      return closing;
    },
  };
}
