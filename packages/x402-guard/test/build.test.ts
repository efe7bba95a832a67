/**
 * The package as it is published: `tsc -p tsconfig.build.json` (what `npm pack` runs) builds JavaScript that Node
 * loads without TypeScript, and that build guards the real `x402Client` of `@x402/core`: with Spotcheck unreachable
 * and the default failure mode, `createPaymentPayload` is aborted before the scheme signs anything.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { x402Client } from '@x402/core/client';
import { afterAll, expect, it } from 'vitest';
import { BASE_USDC, challenge, requirement } from './fakes.ts';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'x402-guard-build-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

it('builds to JavaScript that guards the official client', async () => {
  const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
  execFileSync(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.build.json'), '--outDir', outDir]);
  expect(readdirSync(outDir)).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'guard.js']));
  const built = (await import(
    pathToFileURL(join(outDir, 'index.js')).href
  )) as typeof import('../src/index.ts');

  let signed = 0;
  const client = new x402Client().register('eip155:8453', {
    scheme: 'exact',
    createPaymentPayload: async () => {
      signed += 1;
      return { x402Version: 2, payload: {} };
    },
  });
  client.setSpendControls(false);
  const events: unknown[] = [];
  built.attachGuard(client, {
    service: 'http://127.0.0.1:9',
    timeoutMs: 1000,
    onEvent: (e) => events.push(e),
  });
  await expect(client.createPaymentPayload(challenge() as never)).rejects.toThrow(
    /Payment creation aborted: spotcheck could not decide .* failing closed/,
  );
  expect(signed).toBe(0);
  expect(events).toMatchObject([{ type: 'undecided', cause: 'unreachable', paid: false }]);
  expect(built.requirementSha256({ ...requirement(), asset: BASE_USDC })).toMatch(/^[0-9a-f]{64}$/);
});
