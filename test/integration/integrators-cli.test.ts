/**
 * The operator CLIs as an operator runs them, with no server holding the store: `npm run integrators` and
 * `npm run invoices` (the hand-over to a running server is tested end to end with the server).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServiceKey } from '../../core/service-key.ts';
import { issuedKey, runCli } from '../helpers/cli.ts';

let dataDir: string;

const cli = (file: string, args: string[]) => runCli(file, args, dataDir);

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
      const key = issuedKey(out);
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

  it('refuses an operation the store refuses, with a message, status 1 and no key printed', async () => {
    const noOne = await cli('integrators-cli.ts', ['keys:issue', 'nobody']);
    expect(noOne.code).toBe(1);
    expect(noOne.stderr).toMatch(/no integrator nobody/);
    expect(noOne.stdout).not.toMatch(/sck_live_/);
  });

  it('refuses an integrator id that is already a key id, so suspend/resume/revoke can never mean both', async () => {
    await cli('integrators-cli.ts', ['create', '--name', 'Keyed', '--credit-limit', '1', '--id', 'keyed']);
    const keyId =
      parseServiceKey(issuedKey(await cli('integrators-cli.ts', ['keys:issue', 'keyed'])))?.id ?? '';
    expect(keyId).toMatch(/^[a-z0-9]{12}$/);
    const clash = await cli('integrators-cli.ts', [
      'create',
      '--name',
      'Clash',
      '--credit-limit',
      '1',
      '--id',
      keyId,
    ]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`${keyId} is already a key id; choose another --id for the integrator`);
    const list = JSON.parse((await cli('integrators-cli.ts', ['list'])).stdout) as Array<{ id: string }>;
    expect(list.map((row) => row.id)).not.toContain(keyId);
  });

  it('lists no overpayments on a fresh store', async () => {
    const listed = await cli('invoices-cli.ts', ['--overpayments']);
    expect(listed.stderr).toBe('');
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it('issues invoices for a closed month idempotently (no usage, no invoice)', async () => {
    const first = await cli('invoices-cli.ts', ['--month', '2026-01']);
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toEqual([]);
    expect(await readdir(dataDir)).toContain('integrators.duckdb');
  });
});
