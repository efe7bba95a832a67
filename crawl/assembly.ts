/**
 * The pure half of one endpoint of a crawl: from the probe's outcome to the receipt's canonical text, by the same
 * engine as the live check (`core/check-answer.ts`). Signing stays with the caller, which holds the key.
 *
 * A crawl keeps its event loop busy with 1,500 probes in flight, and this half was about 0.25 ms of the 0.53 ms of
 * main-thread CPU each probe cost; every millisecond the loop is busy delays the next request of the slowest host. So
 * `npm run crawl` runs it on a thread of its own ({@link createAssemblyThread}); tests and the bazaar check run it
 * inline ({@link assembleInline}). Both give the same text for the same input.
 */
import { Worker } from 'node:worker_threads';
import { assembleCheck } from '../core/check-answer.ts';
import { type CrawlFacts, crawlContext, crawlFactsOf } from '../core/crawl-facts.ts';
import type { PlannedEndpoint } from '../core/crawl-plan.ts';
import { canonicalJson } from '../core/jcs.ts';
import type { ProbeOutcome } from '../core/model.ts';
import { receiptWithKid } from '../core/receipt.ts';

/** What assembling one probed endpoint needs: plain data only, so it can cross to a thread. */
export type AssemblyInput = {
  outcome: ProbeOutcome;
  /** The URL probed: the listed one, or the one with the listing's example query. */
  url: string;
  /** The example's members of the receipt's context when the example was used, else null. */
  example: Record<string, unknown> | null;
  endpoint: PlannedEndpoint;
  /** Epoch milliseconds of the assembly. */
  now: number;
  id: string;
  baseUrl: string;
  runId: string;
  origin: 'crawl' | 'bazaar';
  kid: string;
};

/** The receipt to sign (with its `kid`), its canonical text, and the facts the data files are built from. */
export type Assembled = {
  withKid: Record<string, unknown> & { id: string; kid: string };
  text: string;
  facts: CrawlFacts;
};

/** Assembles one probed endpoint: inline ({@link assembleInline}) or on a thread ({@link createAssemblyThread}). */
export type Assemble = (input: AssemblyInput) => Promise<Assembled>;

/**
 * The assembly itself: a check answer against the listing, as a dry run of the live check, in canonical form.
 * @example assemblyOf({ outcome, url, example: null, endpoint, now: Date.now(), id, baseUrl, runId, origin: 'crawl', kid })
 */
export function assemblyOf(input: AssemblyInput): Assembled {
  const { endpoint } = input;
  const check = assembleCheck({
    outcome: input.outcome,
    cached: false,
    cacheTtlS: 0,
    request: {
      url: input.url,
      method: endpoint.method,
      claimedPrice: null,
      payTo: null,
      network: null,
      checkExpiry: false,
      skewS: 30,
    },
    mode: 'live',
    checkType: 'dry-run',
    listing: endpoint.listing,
    previous: [],
    now: new Date(input.now),
    id: input.id,
    baseUrl: input.baseUrl,
    context: { ...crawlContext(input.runId, input.origin, endpoint), ...(input.example ?? {}) },
  });
  const withKid = receiptWithKid(check.unsigned, input.kid) as Assembled['withKid'];
  return { withKid, text: canonicalJson(withKid), facts: crawlFactsOf(check, endpoint) };
}

/** {@link assemblyOf} on the caller's thread. */
export const assembleInline: Assemble = async (input) => assemblyOf(input);

/** An assembly thread: `assemble` as {@link Assemble}, and `close` to stop it. */
export type AssemblyThread = { assemble: Assemble; close(): Promise<void> };

/**
 * Starts a thread that runs {@link assemblyOf} (`crawl/assembly-thread.ts`, loaded by Node's own type stripping).
 * The thread does not keep the process alive; a failure of one assembly rejects that call only, and a thread that
 * dies rejects every call it held.
 * @example const thread = createAssemblyThread(); const { text } = await thread.assemble(input); await thread.close()
 */
export function createAssemblyThread(): AssemblyThread {
  const worker = new Worker(new URL('./assembly-thread.ts', import.meta.url), {
    resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 128 },
  });
  worker.unref();
  const pending = new Map<number, PromiseWithResolvers<Assembled>>();
  let next = 0;
  let stopped: Error | null = null;
  worker.on('message', (message: { seq: number; assembled?: Assembled; error?: string }) => {
    const call = pending.get(message.seq);
    if (!call) return;
    pending.delete(message.seq);
    if (message.assembled) call.resolve(message.assembled);
    else call.reject(new Error(`crawl assembly: ${message.error ?? 'failed'}`));
  });
  const stop = (error: Error) => {
    stopped ??= error;
    for (const call of pending.values()) call.reject(stopped);
    pending.clear();
  };
  worker.on('error', (error) => stop(error instanceof Error ? error : new Error(String(error))));
  worker.on('exit', () => stop(new Error('crawl assembly: its thread stopped')));
  return {
    assemble(input) {
      if (stopped) return Promise.reject(stopped);
      const call = Promise.withResolvers<Assembled>();
      const seq = next++;
      pending.set(seq, call);
      worker.postMessage({ seq, input });
      return call.promise;
    },
    async close() {
      stopped ??= new Error('crawl assembly: closed');
      await worker.terminate();
    },
  };
}
