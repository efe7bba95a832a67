/**
 * `npm run demo` as CI runs it: `sandbox/demo.ts --once` under tsx tours the product against the sandbox world
 * and exits 0, leaving nothing listening.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DEMO_BUDGET_MS = 90_000;

/**
 * Runs the demo as node with tsx's loader (not the tsx CLI, whose grandchild a kill would miss), in its own
 * process group so a kill also reaches anvil and its watchdog. The group is SIGKILLed when the demo overruns,
 * in `finally`, and once more when the test ends (a vitest timeout never reaches `finally`).
 */
async function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/demo.ts', '--once'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const killGroup = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is already gone.
    }
  };
  onTestFinished(killGroup);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const timer = setTimeout(killGroup, DEMO_BUDGET_MS);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (exitCode) => resolve(exitCode));
    });
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
    killGroup();
  }
}

describe('npm run demo -- --once', () => {
  it('tours the product offline and exits 0', async () => {
    const { code, stdout, stderr } = await runDemo();
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/\[1\/9\] Sandbox world up/);
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

    // Everything was shut down: the service URL it printed no longer answers.
    const health = /health\s+(http:\/\/127\.0\.0\.1:\d+\/healthz)/.exec(stdout)?.[1];
    expect(health).toBeDefined();
    await expect(fetch(health!)).rejects.toThrow();
  }, 120_000);
});
