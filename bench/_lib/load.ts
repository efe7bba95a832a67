/**
 * A closed-loop load generator: `connections` workers, each on its own keep-alive connection, send GETs back to
 * back for a fixed time after a warm-up. Closed loop means the offered load adapts to the server, so the figure
 * is the throughput the server sustains with that many requests in flight (not an open-loop arrival rate).
 */
import { performance } from 'node:perf_hooks';
import { keepAliveAgent, type Timed, timedGet } from './http.ts';
import { type Summary, summarize } from './stats.ts';

/** Options of {@link runLoad}. */
export type LoadOptions = {
  url: string;
  headers?: Record<string, string>;
  /** Headers of each request, when they differ from one request to the next (e.g. many keys). */
  headersFor?: () => Record<string, string>;
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** True when an answer is correct; anything else counts as an error. */
  accept: (answer: Timed) => boolean;
  /** Sees every accepted answer, warm-up included (e.g. to collect receipt ids). */
  onAnswer?: (answer: Timed) => void;
};

/** What one load run measured (latency and rate over the measured window only). */
export type LoadResult = {
  seconds: number;
  requests: number;
  rps: number;
  latency: Summary;
  errors: number;
  /** Accepted answers over the whole run, warm-up included. */
  acceptedTotal: number;
  firstError: string | null;
};

/** Runs the load and returns its figures. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = keepAliveAgent(options.connections);
  const start = performance.now();
  const measureFrom = start + options.warmupMs;
  const end = measureFrom + options.durationMs;
  const samples: number[] = [];
  let errors = 0;
  let acceptedTotal = 0;
  let firstError: string | null = null;
  let measuredRequests = 0;

  const worker = async () => {
    while (performance.now() < end) {
      const sent = performance.now();
      let ok = false;
      try {
        const answer = await timedGet(options.url, {
          agent,
          ...(options.headersFor
            ? { headers: options.headersFor() }
            : options.headers
              ? { headers: options.headers }
              : {}),
        });
        ok = options.accept(answer);
        if (ok) {
          acceptedTotal++;
          options.onAnswer?.(answer);
        } else firstError ??= `status ${answer.status}: ${answer.body.slice(0, 200)}`;
        if (sent >= measureFrom && performance.now() <= end) {
          measuredRequests++;
          if (ok) samples.push(answer.ms);
        }
      } catch (error) {
        firstError ??= String(error);
      }
      if (!ok && sent >= measureFrom) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  agent.destroy();
  const seconds = options.durationMs / 1000;
  return {
    seconds,
    requests: measuredRequests,
    rps: samples.length / seconds,
    latency: summarize(samples),
    errors,
    acceptedTotal,
    firstError,
  };
}
