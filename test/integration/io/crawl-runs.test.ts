import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunJournal, readRunJournal, visitRunJournal } from '../../../io/runs/journal.ts';
import { listRuns, newRunId, publishRun, readPointer, runPaths } from '../../../io/runs/paths.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sc-runs-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('run journal', () => {
  it('appends records durably in group commits and reads them back', async () => {
    const path = join(dir, 'probes.ndjson');
    const journal = await openRunJournal(path);
    await Promise.all(Array.from({ length: 50 }, (_, i) => journal.append({ i })));
    await journal.close();
    expect(await readRunJournal(path)).toEqual(Array.from({ length: 50 }, (_, i) => ({ i })));
  });

  it('cuts a torn last line off the file (a SIGKILL mid-write) and appends cleanly after it', async () => {
    const path = join(dir, 'probes.ndjson');
    await writeFile(path, '{"i":0}\n{"i":1}\n{"i":2');
    expect(await readRunJournal(path)).toEqual([{ i: 0 }, { i: 1 }]);
    expect(await readFile(path, 'utf8')).toBe('{"i":0}\n{"i":1}\n');
    const journal = await openRunJournal(path);
    await journal.append({ i: 3 });
    await journal.close();
    expect(await readRunJournal(path)).toEqual([{ i: 0 }, { i: 1 }, { i: 3 }]);
    await appendFile(path, 'garbage\n{"i":4}\n');
    await expect(readRunJournal(path)).rejects.toThrow(/damaged line before the end/);
  });

  it('appends serialized records as they are, between the records append serializes', async () => {
    const path = join(dir, 'probes.ndjson');
    const journal = await openRunJournal(path);
    await Promise.all([journal.append({ i: 0 }), journal.appendJson('{"i":1,"r":{"z":1,"a":2}}')]);
    await journal.close();
    expect(await readFile(path, 'utf8')).toBe('{"i":0}\n{"i":1,"r":{"z":1,"a":2}}\n');
  });

  it('reads a journal larger than one read of the file a record at a time, the torn tail cut at its byte', async () => {
    // Records across the stream's 64 KiB reads, with multi-byte text, so lines split between two reads and the cut
    // is counted in bytes.
    const path = join(dir, 'probes.ndjson');
    const records = Array.from({ length: 3000 }, (_, i) => ({ i, text: `é${'x'.repeat(i % 97)}` }));
    const whole = records.map((record) => `${JSON.stringify(record)}\n`).join('');
    await writeFile(path, `${whole}{"i":3000,"text":"é`);
    const seen: unknown[] = [];
    await visitRunJournal(path, async (record) => {
      seen.push(record);
    });
    expect(seen).toEqual(records);
    expect(await readFile(path, 'utf8')).toBe(whole);
    await writeFile(path, `${whole}not json\n{"i":3001`);
    expect(await readRunJournal(path)).toEqual(records);
    expect(await readFile(path, 'utf8')).toBe(whole);
    await writeFile(path, `${whole}not json\n${whole}`);
    await expect(visitRunJournal(path, () => {})).rejects.toThrow(
      `damaged line before the end (byte ${Buffer.byteLength(whole)})`,
    );
  });

  it('is empty when missing', async () => {
    expect(await readRunJournal(join(dir, 'nope.ndjson'))).toEqual([]);
  });
});

describe('run folders', () => {
  it('publishes a work folder and points current.json at it; a crash after the rename can publish again', async () => {
    const paths = runPaths(dir, 'crawl');
    const id = newRunId(new Date('2026-11-24T01:02:03.456Z'), () => new Uint8Array([0x3f, 0x9a]));
    expect(id).toBe('20261124T010203Z-3f9a');
    expect(await readPointer(paths)).toBeNull();
    await mkdir(join(paths.work, id), { recursive: true });
    await writeFile(join(paths.work, id, 'run.json'), '{}');
    const pointer = await publishRun(paths, id, new Date('2026-11-24T02:00:00.000Z'));
    expect(pointer).toEqual({
      schema: 1,
      run_id: id,
      path: `runs/${id}`,
      published_at: '2026-11-24T02:00:00.000Z',
    });
    expect(await readPointer(paths)).toEqual(pointer);
    expect(await listRuns(paths.runs)).toEqual([id]);
    expect(await listRuns(paths.work)).toEqual([]);
    await expect(publishRun(paths, id, new Date())).resolves.toMatchObject({ run_id: id });
    await writeFile(paths.current, 'not json');
    expect(await readPointer(paths)).toBeNull();
  });
});
