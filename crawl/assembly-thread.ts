/**
 * The thread of {@link createAssemblyThread} (`crawl/assembly.ts`): each message `{ seq, input }` is answered
 * `{ seq, assembled }`, or `{ seq, error }` when the assembly threw.
 */
import { parentPort } from 'node:worker_threads';
import { type AssemblyInput, assemblyOf } from './assembly.ts';

parentPort?.on('message', ({ seq, input }: { seq: number; input: AssemblyInput }) => {
  try {
    parentPort?.postMessage({ seq, assembled: assemblyOf(input) });
  } catch (error) {
    parentPort?.postMessage({ seq, error: error instanceof Error ? error.message : String(error) });
  }
});
