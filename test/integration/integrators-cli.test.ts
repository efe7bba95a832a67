/**
 * The operator CLIs as an operator runs them, with no server holding the store: `npm run integrators` and
 * `npm run invoices` (the hand-over to a running server is tested end to end with the server).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServiceKey } from '../../core/service-key.ts';

const ROOT = join(import.meta.dirname, '../..');
let dataDir: string;

function cli(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(ROOT, 'api', file), ...args],
      // Only what the CLI needs: vitest's own environment sets BASE_URL to '/'.
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir },
        timeout: 60_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'spotcheck-cli-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

// Each run starts tsx (seconds on a loaded machine): the suite gets room, not a speed assertion.
describe('npm run integrators / invoices without a server', { timeout: 240_000 }, () => {
  it('creates an integrator, issues two keys shown once, suspends, resumes and revokes', async () => {
    const created = await cli('integrators-cli.ts', [
      'create',
      '--name',
      'Acme Router',
      '--credit-limit',
      '25.5',
      '--id',
      'acme',
    ]);
    expect(created.stderr).toBe('');
    expect(JSON.parse(created.stdout)).toEqual({ created: 'acme', credit_limit_atomic: '25500000' });

    const issued = [];
    for (const label of ['prod', 'staging']) {
      const out = await cli('integrators-cli.ts', ['keys:issue', 'acme', '--label', label]);
      const key = /key \(shown once, store it now\): (\S+)/.exec(out.stdout)?.[1] ?? '';
      expect(parseServiceKey(key)).not.toBeNull();
      issued.push(parseServiceKey(key)?.id ?? '');
    }
    const [prod = '', staging = ''] = issued;
    expect(prod).not.toBe(staging);

    expect((await cli('integrators-cli.ts', ['suspend', prod])).code).toBe(0);
    expect((await cli('integrators-cli.ts', ['revoke', staging])).code).toBe(0);
    expect((await cli('integrators-cli.ts', ['resume', 'acme'])).code).toBe(0);
    const list = JSON.parse((await cli('integrators-cli.ts', ['list'])).stdout);
    expect(list[0].keys.map((key: { id: string; state: string }) => [key.id, key.state])).toEqual([
      [prod, 'active'],
      [staging, 'revoked'],
    ]);
    // The secret never reaches the store's listing.
    expect(JSON.stringify(list)).not.toMatch(/sck_live_/);
  });

  it('refuses bad input with a message and status 1', async () => {
    const bad = await cli('integrators-cli.ts', ['create', '--name', 'x', '--credit-limit', 'lots']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/credit-limit/);
    const noOne = await cli('integrators-cli.ts', ['keys:issue', 'nobody']);
    expect(noOne.code).toBe(1);
    expect(noOne.stderr).toMatch(/no integrator nobody/);
    expect(noOne.stdout).not.toMatch(/sck_live_/);
    const month = await cli('invoices-cli.ts', ['--month', 'May']);
    expect(month.code).toBe(1);
    expect(month.stderr).toMatch(/month/);
  });

  it('issues invoices for a closed month idempotently (no usage, no invoice)', async () => {
    const first = await cli('invoices-cli.ts', ['--month', '2026-01']);
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toEqual([]);
    const open = await cli('invoices-cli.ts', ['--month', '2999-01']);
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/has not ended/);
    expect(await readdir(dataDir)).toContain('integrators.duckdb');
  });
});
