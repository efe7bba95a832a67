/**
 * `npm run demo` as a person runs it: `sandbox/demo.ts` under tsx tours the product against the sandbox world and
 * keeps serving; the URLs it printed answer (the free check and the MCP call with the visitor's own free checks,
 * unspent by the tour); Ctrl-C prints one line and leaves nothing listening. With `--data-dir` it says how to serve
 * the kept data again on the origin its receipts and pages name.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitFor } from '../helpers/wait.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const DEMO_BUDGET_MS = 90_000;
const RUNNING = 'Running until Ctrl-C.\n';

type Demo = {
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code once the demo has ended on its own. */
  exited: Promise<number | null>;
  /** Sends `signal` to the demo's process group, as a terminal's Ctrl-C does; resolves with the exit code. */
  stop(signal: NodeJS.Signals): Promise<number | null>;
};

/**
 * Runs the demo as node with tsx's loader (not the tsx CLI, whose grandchild a kill would miss), in its own
 * process group so a signal reaches anvil and its watchdog too, as a terminal's would. The group is SIGKILLed when
 * the demo overruns and once more when the test ends (a vitest timeout never reaches `finally`).
 */
function startDemo(args: string[]): Demo {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/demo.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  };
  onTestFinished(() => signalGroup('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const closed = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  });
  return {
    output: () => ({ stdout, stderr }),
    exited: closed,
    async stop(signal) {
      signalGroup(signal);
      const timer = setTimeout(() => signalGroup('SIGKILL'), 30_000);
      try {
        return await closed;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** The URL printed after `label` in the tour's list. */
function printed(stdout: string, label: string): string {
  const url = new RegExp(`${label}\\s+(http://127\\.0\\.0\\.1:\\d+\\S*)`).exec(stdout)?.[1];
  if (url === undefined) throw new Error(`the demo printed no ${label}`);
  return url;
}

describe('npm run demo', () => {
  it('tours the product offline, leaves its printed URLs working, and stops on Ctrl-C with one line', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sc-demo-data-'));
    onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
    // No --port: the demo takes 8402 when free, else a port of the OS's choosing, held from the start.
    const demo = startDemo(['--data-dir', dataDir]);
    await waitFor(
      () => {
        const { stdout, stderr } = demo.output();
        return stdout.endsWith(RUNNING) || /demo failed/.test(stderr);
      },
      { what: 'the tour to end', timeoutMs: DEMO_BUDGET_MS },
    );
    const { stdout, stderr } = demo.output();
    // The service's own log lines go to stderr; a failure of the tour would too.
    expect(stderr).not.toMatch(/demo failed/);
    expect(stdout).toMatch(/\[1\/9\] Sandbox world up/);
    const port = Number(/\[2\/9\] Service up in [^\n]* at http:\/\/127\.0\.0\.1:(\d+),/.exec(stdout)?.[1]);
    expect(stdout).toMatch(/crawl run \d{8}T\d{6}Z-[0-9a-f]{4}: 33 endpoints/);
    expect(stdout).toMatch(/sandbox-broken failed \(0\)/);
    expect(stdout).toMatch(/5 saves/);
    expect(stdout).toMatch(/skip listing\s+http:\/\/127\.0\.0\.1:\d+\/v1\/skips\.json\?page=1/);
    // The site, built after the crawl and served by the demo's own server.
    expect(stdout).toMatch(/npm run build:site in [\d.]+ s [^\n]*: \d+ pages\n\s+and 38 receipt pages/);
    for (const path of [
      '/',
      '/v1/skips/',
      '/saves/',
      '/bazaar/',
      '/rules/',
      '/receipts/sc-\\w+/',
      '/verify/',
    ])
      expect(stdout).toMatch(
        new RegExp(`site: [^\\n]*http://127\\.0\\.0\\.1:\\d+${path.replaceAll('.', '\\.')}`),
      );
    expect(stdout).toMatch(/site: a badge\s+http:\/\/127\.0\.0\.1:\d+\/badge\/127\.0\.0\.1:\d+\//);
    expect(stdout).toMatch(/loopback passes the SSRF gate for this demo only/);
    expect(stdout).toMatch(/Imported 3 listings/);
    expect(stdout).toMatch(/sdk-ok\s+pay\s+price_below_listing/);
    expect(stdout).toMatch(/v1-only\s+skip\s+pay_to_mismatch/);
    expect(stdout).toMatch(/redirect-private\s+skip\s+ssrf_blocked/);
    expect(stdout).toMatch(/check 6: HTTP 402, asks 20000 atomic USDC on eip155:8453/);
    expect(stdout).toMatch(/tx 0x[0-9a-f]{64} \(block \d+, success\)/);
    expect(stdout).toMatch(/service wallet 0\.000000 → 0\.020000 USDC \(\+0\.020000\)/);
    expect(stdout).toMatch(/verified offline with the auditors' verifier \(kid [\w-]+\): ok/);
    expect(stdout).toMatch(/verdict changed to skip: bad_signature/);
    // Known answers: right-cheap before right (same pass rate, cheaper), then sometimes, then wrong, then the seller
    // of one constant body; paid from the run's own wallet, not the buyer that funded it.
    expect(stdout).toMatch(
      /1\. sandbox-fx\/right-cheap[^\n]*\n\s+2\. sandbox-fx\/right [^\n]*\n\s+3\. sandbox-fx\/sometimes[^\n]*\n\s+4\. sandbox-fx\/wrong[^\n]*\n\s+5\. sandbox-fx\/constant[^\n]*pass 0 /,
    );
    const paidFrom = /paid from (0x[0-9a-fA-F]{40}) \(funded by (0x[0-9a-fA-F]{40})\)/.exec(stdout);
    expect(paidFrom?.[1]).toBeDefined();
    expect(paidFrom?.[1]).not.toBe(paidFrom?.[2]);
    expect(stdout).toMatch(/facts_only: sandbox-fx\/no-delivery/);

    expect(stdout).toMatch(/It calls from 127\.0\.0\.2, so the free checks of 127\.0\.0\.1/);

    // Right after the tour, the visitor's own free checks are all there: the URL it printed answers the first.
    const check = await fetch(printed(stdout, 'a free check'));
    expect(check.status).toBe(200);
    expect(((await check.json()) as { access: { free_used_today: number } }).access.free_used_today).toBe(1);
    // The MCP call it printed, as printed (its curl body), answers a verdict, not a payment requirement.
    const mcp = /MCP \(POST\)\s+(\S+)\s+curl [^\n]* -d '([^']+)'/.exec(stdout);
    expect(mcp).not.toBeNull();
    const answer = await fetch(mcp?.[1] as string, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: mcp?.[2] ?? '',
    });
    expect(answer.status).toBe(200);
    const result = ((await answer.json()) as { result: { isError?: boolean; structuredContent?: unknown } })
      .result;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ verdict: 'pay', access: { free_used_today: 2 } });
    expect((await fetch(printed(stdout, 'paid receipt'))).status).toBe(200);
    expect((await fetch(printed(stdout, 'site: a receipt'))).status).toBe(200);
    // Kept data: how to serve it again on the origin its receipts name.
    expect(stdout).toContain(
      `serve this data again: DATA_DIR=${dataDir}${port === 8402 ? '' : ` PORT=${port}`} npm start  (its receipts and pages link to port ${port})`,
    );
    expect(printed(stdout, 'paid receipt')).toContain(`http://127.0.0.1:${port}/`);

    // Ctrl-C (the whole group signalled, as by a terminal): one line, exit 0, nothing left listening.
    const stderrBefore = demo.output().stderr.length;
    const code = await demo.stop('SIGINT');
    const after = demo.output();
    expect(code, after.stderr).toBe(0);
    expect(after.stdout.slice(after.stdout.indexOf(RUNNING) + RUNNING.length)).toBe(
      'SIGINT: stopping the service and the sandbox world…\n',
    );
    expect(after.stderr.slice(stderrBefore)).toBe('');
    const health = printed(stdout, 'health');
    await expect(fetch(health)).rejects.toThrow();
  }, 150_000);

  it('fails at once, naming the port, when --port is taken', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    onTestFinished(() => new Promise<void>((done) => taken.close(() => done())));
    const { port } = taken.address() as { port: number };
    const demo = startDemo(['--port', String(port)]);
    expect(await demo.exited).toBe(1);
    const { stdout, stderr } = demo.output();
    expect(stderr).toMatch(new RegExp(`demo failed: Error: listen EADDRINUSE[^\\n]*127\\.0\\.0\\.1:${port}`));
    // Nothing of the world started: the port is taken before anvil or the sellers.
    expect(stdout).not.toMatch(/Sandbox world up/);
  }, 30_000);
});
