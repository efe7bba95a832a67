/**
 * At most `max` tasks in flight per key (a host): the watcher's politeness to sellers and to webhook receivers.
 * Tasks over the limit wait their turn in order.
 */

/** Runs tasks under a per-key limit. */
export type HostLimiter = { run<T>(key: string, task: () => Promise<T>): Promise<T> };

/** Creates a limiter of `max` tasks in flight per key. */
export function createHostLimiter(max: number): HostLimiter {
  const running = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  const release = (key: string) => {
    const next = waiting.get(key)?.shift();
    if (next) return next();
    const left = (running.get(key) ?? 1) - 1;
    if (left === 0) {
      running.delete(key);
      waiting.delete(key);
    } else running.set(key, left);
  };
  const acquire = (key: string): Promise<void> => {
    const count = running.get(key) ?? 0;
    if (count < max) {
      running.set(key, count + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = waiting.get(key) ?? [];
      queue.push(resolve);
      waiting.set(key, queue);
    });
  };
  return {
    async run(key, task) {
      await acquire(key);
      try {
        return await task();
      } finally {
        release(key);
      }
    },
  };
}
