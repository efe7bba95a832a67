/**
 * The static checks of `npm test` side by side: `biome check .`, `tsc --noEmit` and the site's `tsc`, each in a
 * process of its own, so that the 2 cores of a CI machine work on them together instead of one after another
 * (docs/performance.md "The test suite"). Each command's output is held and printed whole once it ends, under a
 * line naming it, its status and its time; the exit status is 1 when any of them failed. The typechecks keep
 * `.tsbuildinfo` files under `node_modules/.cache/`, so a run after a small change checks what changed.
 *
 * Run as `node test/helpers/checks.ts` (Node strips the types itself); `npm test` runs vitest after it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
const CACHE = join(ROOT, 'node_modules/.cache/spotcheck');
const BIN = join(ROOT, 'node_modules/.bin');

/** One check: what it is called in the output, and the command. */
type Check = { name: string; command: string; args: string[] };

const CHECKS: Check[] = [
  { name: 'lint: biome check .', command: join(BIN, 'biome'), args: ['check', '.'] },
  {
    name: 'typecheck: tsc --noEmit',
    command: join(BIN, 'tsc'),
    args: ['--noEmit', '--incremental', '--tsBuildInfoFile', join(CACHE, 'tsc.tsbuildinfo')],
  },
  {
    name: 'typecheck: tsc -p site/tsconfig.json --noEmit',
    command: join(BIN, 'tsc'),
    args: [
      '-p',
      'site/tsconfig.json',
      '--noEmit',
      '--incremental',
      '--tsBuildInfoFile',
      join(CACHE, 'tsc-site.tsbuildinfo'),
    ],
  },
];

/** Runs `check` to its end; resolves with whether it passed, having printed its output in one block. */
function run(check: Check): Promise<boolean> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(check.command, check.args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    let ended = false;
    const end = (passed: boolean, status: string) => {
      if (ended) return;
      ended = true;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const output = Buffer.concat(chunks).toString().trimEnd();
      process.stdout.write(`\n== ${check.name}: ${status} in ${seconds} s\n${output ? `${output}\n` : ''}`);
      resolve(passed);
    };
    child.once('error', (error) => end(false, `could not start (${error.message})`));
    child.once('close', (code, signal) => end(code === 0, code === 0 ? 'ok' : `failed (${signal ?? code})`));
  });
}

const results = await Promise.all(CHECKS.map(run));
const failed = CHECKS.filter((_, i) => !results[i]).map((check) => check.name);
if (failed.length > 0) {
  process.stdout.write(`\nchecks failed: ${failed.join('; ')}\n`);
  process.exit(1);
}
