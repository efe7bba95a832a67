/**
 * The opt-out files as the running service reads them (`io/opt-out.ts`): read again once one changes, a bad edit
 * reported (the watches then probe nothing) while the last good list is kept, a missing file an empty list.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOptOutSource, optOutPaths, readOptOutFiles } from '../../../io/opt-out.ts';

const dir = mkdtempSync(join(tmpdir(), 'spotcheck-opt-out-'));
afterEach(() => rmSync(join(dir, 'opt-out.json'), { force: true }));

describe('createOptOutSource', () => {
  it('reads the files again after a change, and keeps the last good list while a bad edit is reported', async () => {
    const file = join(dir, 'opt-out.json');
    const source = createOptOutSource([file], 0);
    expect(await source.read()).toEqual({ list: new Set(), error: null });
    writeFileSync(file, JSON.stringify({ schema: 1, hosts: ['Seller.example'] }));
    expect(await source.read()).toEqual({ list: new Set(['seller.example']), error: null });
    writeFileSync(file, '{"schema": 1, "hosts": ["not a host"');
    const bad = await source.read();
    expect(bad.list).toEqual(new Set(['seller.example']));
    expect(bad.error).toMatch(/opt-out\.json: not JSON/);
    writeFileSync(file, JSON.stringify({ schema: 1, hosts: [] }));
    expect(await source.read()).toEqual({ list: new Set(), error: null });
  });

  it('looks at the files at most once per recheck period', async () => {
    const file = join(dir, 'opt-out.json');
    const source = createOptOutSource([file], 60_000);
    expect((await source.read()).list.size).toBe(0);
    writeFileSync(file, JSON.stringify({ schema: 1, hosts: ['seller.example'] }));
    expect((await source.read()).list.size).toBe(0);
  });
});

describe('optOutPaths', () => {
  it('names the checked-in list, then the operator’s, which both read as one', async () => {
    const paths = optOutPaths(dir);
    expect(paths[1]).toBe(join(dir, 'opt-out.json'));
    writeFileSync(paths[1] as string, JSON.stringify({ schema: 1, hosts: ['seller.example:8443'] }));
    expect(await readOptOutFiles(paths)).toEqual(new Set(['seller.example:8443']));
  });
});
