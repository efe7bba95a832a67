/**
 * Everything runs on the maintained Node LTS that the `node` devDependency brings (README "Which Node"), not on the
 * system Node that ran `npm install`: the vitest worker, the service as `npm start` runs it, and a CLI as
 * `npm run verify` runs it. Each spawned command gets test/fixtures/report-node.mjs preloaded into every Node process
 * it starts, so a process that slipped onto another Node (a child spawned as plain `node`, a bin whose
 * `#!/usr/bin/env node` found the system one) is named, not just the last one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { waitFor } from '../helpers/wait.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const REPORTER = join(ROOT, 'test/fixtures/report-node.mjs');
const SPAWN_BUDGET_MS = 60_000;

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
/** The major of the Node binary the `node` devDependency pins, e.g. 26 for "26.10.0". */
const LTS_MAJOR = Number(manifest.devDependencies.node?.split('.')[0]);
const majorOf = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

type Reported = { node: string; script: string };
/** npm's own CLI runs on whatever Node is on the PATH (the set-up Node); everything it starts must be the LTS. */
const isNpm = (r: Reported) => ['npm', 'npm-cli.js'].includes(basename(r.script));

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'spotcheck-node-runtime-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Starts `npm <args>` in its own process group with the reporter preloaded; the group is killed when the test ends. */
function npm(args: string[], env: Record<string, string>, report: string): ChildProcess {
  const child = spawn('npm', args, {
    cwd: ROOT,
    env: { ...process.env, ...env, SPOTCHECK_NODE_REPORT: report, NODE_OPTIONS: `--import=${REPORTER}` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  onTestFinished(() => stopGroup(child));
  return child;
}

/** SIGTERMs the process group and waits until no process of it is left (SIGKILL after 10 s). */
async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (alive()) process.kill(-pid, 'SIGTERM');
  await waitFor(() => !alive(), {
    what: `process group ${pid} to end after SIGTERM`,
    timeoutMs: 10_000,
    intervalMs: 100,
  }).catch(() => {
    if (alive()) process.kill(-pid, 'SIGKILL');
  });
}

async function reported(file: string): Promise<Reported[]> {
  const text = await readFile(file, 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Reported);
}

/** The processes of a command that ran on another Node than the LTS, npm's own excepted. */
const offLts = (all: Reported[]) => all.filter((r) => !isNpm(r) && majorOf(r.node) !== LTS_MAJOR);

describe('the Node LTS runs everything', () => {
  it('pins an LTS line in the node devDependency and engines', () => {
    expect([24, 26]).toContain(LTS_MAJOR);
    expect(manifest.engines.node).toBe(`^${manifest.devDependencies.node}`);
  });

  it('runs this vitest worker', () => {
    expect(majorOf(process.versions.node)).toBe(LTS_MAJOR);
  });

  it(
    'runs the service started by npm start, which says so on its start-up line',
    async () => {
      const report = join(work, 'start.jsonl');
      const child = npm(
        ['start'],
        {
          // vitest puts Vite's BASE_URL "/" into the environment; the service needs an origin of its own.
          BASE_URL: 'http://spotcheck.test',
          HOST: '127.0.0.1',
          PORT: '0',
          DATA_DIR: join(work, 'data'),
        },
        report,
      );
      let stdout = '';
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const listening = new Promise<string>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          stdout += chunk.toString('utf8');
          const line = stdout.split('\n').find((l) => l.startsWith('[spotcheck] listening on '));
          if (line) resolve(line);
        });
        child.once('exit', (code) =>
          reject(new Error(`npm start exited ${code} before listening:\n${stdout}${stderr}`)),
        );
      });
      const line = await listening;
      const url = /listening on (\S+)/.exec(line)?.[1];
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(line).toMatch(new RegExp(` on Node v${LTS_MAJOR}\\.\\d+\\.\\d+ `));

      const all = await reported(report);
      expect(all.some((r) => r.script.endsWith(join('api', 'main.ts')))).toBe(true);
      expect(offLts(all)).toEqual([]);
    },
    SPAWN_BUDGET_MS,
  );

  it(
    'runs a CLI started through its npm script',
    async () => {
      const report = join(work, 'verify.jsonl');
      const child = npm(['run', '--silent', 'verify', '--', join(work, 'no-such-receipt.json')], {}, report);
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      // The verifier refuses a missing file with a non-zero exit; that it ran at all is what the report shows.
      expect(code).not.toBe(0);

      const all = await reported(report);
      const cli = all.filter((r) => r.script.endsWith(join('verify', 'cli.ts')));
      expect(cli).toHaveLength(1);
      expect(majorOf(cli[0]?.node ?? '0')).toBe(LTS_MAJOR);
      expect(offLts(all)).toEqual([]);
    },
    SPAWN_BUDGET_MS,
  );
});
