import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createJournal,
  JournalCorruptError,
  type JournalPosition,
  readJournal,
} from '../../../io/receipts/journal.ts';

const ROOT = join(import.meta.dirname, '../../..');
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spotcheck-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect(replay: (visit: (r: unknown, p: JournalPosition) => void) => Promise<void>) {
  const out: { record: unknown; position: JournalPosition }[] = [];
  await replay((record, position) => {
    out.push({ record, position });
  });
  return out;
}

async function segments(): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
}

describe('createJournal: group commit', () => {
  it('acknowledges 1,000 concurrent appends, in few batches, and replays them in order', async () => {
    const journal = await createJournal({ dir });
    const positions = await Promise.all(Array.from({ length: 1000 }, (_, i) => journal.append({ i })));
    expect(positions.map((p) => p.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    const stats = journal.stats();
    expect(stats.appended).toBe(1000);
    // Appends made while a write+fdatasync is in flight share the next one.
    expect(stats.batches).toBeLessThanOrEqual(3);
    expect(stats.syncs).toBe(stats.batches);
    const replayed = await collect((visit) => journal.replay(visit));
    expect(replayed.map((r) => r.record)).toEqual(Array.from({ length: 1000 }, (_, i) => ({ i })));
    await journal.close();
  });

  it('takes a record already serialized (appendJson) in the same order and framing as append', async () => {
    const journal = await createJournal({ dir });
    const [a, b] = await Promise.all([
      journal.append({ a: 1 }),
      journal.appendJson('{"b":"line\\nbreak escaped","c":[1,2]}'),
    ]);
    expect([a?.seq, b?.seq]).toEqual([1, 2]);
    await expect(journal.appendJson('{"raw":"line\nbreak"}')).rejects.toThrow(/one line/);
    await expect(journal.appendJson('[1]')).rejects.toThrow(/JSON object/);
    const replayed = await collect((visit) => journal.replay(visit));
    expect(replayed.map((r) => r.record)).toEqual([{ a: 1 }, { b: 'line\nbreak escaped', c: [1, 2] }]);
    await journal.close();
  });

  it('caps a batch at maxBatch records', async () => {
    const journal = await createJournal({ dir, maxBatch: 100 });
    await Promise.all(Array.from({ length: 1000 }, (_, i) => journal.append({ i })));
    expect(journal.stats().batches).toBeGreaterThanOrEqual(10);
    await journal.close();
  });

  it('writes one JSON line per record, and keeps seq across a restart', async () => {
    const first = await createJournal({ dir });
    await first.append({ a: 1 });
    await first.append({ b: 'é\u2028' });
    await first.close();
    const second = await createJournal({ dir });
    expect((await second.append({ c: true })).seq).toBe(3);
    await second.close();
    const [name] = await segments();
    expect(await readFile(join(dir, name ?? ''), 'utf8')).toBe(
      '{"seq":1,"rec":{"a":1}}\n{"seq":2,"rec":{"b":"é\u2028"}}\n{"seq":3,"rec":{"c":true}}\n',
    );
  });

  it('rejects records that are not JSON objects, and appends after close', async () => {
    const journal = await createJournal({ dir });
    await expect(journal.append({ n: 1n })).rejects.toThrow(TypeError);
    await expect(journal.append([1] as unknown as object)).rejects.toThrow(TypeError);
    expect((await journal.append({ ok: 1 })).seq).toBe(1);
    await journal.close();
    await expect(journal.append({ late: 1 })).rejects.toThrow(/closed/);
  });

  it('allows one writer per directory', async () => {
    const journal = await createJournal({ dir });
    await expect(createJournal({ dir })).rejects.toThrow(/already open/);
    await journal.close();
    const again = await createJournal({ dir });
    await again.close();
  });
});

describe('createJournal: segments and replay', () => {
  it('rolls over at the UTC day and past maxSegmentBytes, and replays across segments', async () => {
    let now = new Date('2026-03-01T23:59:59Z');
    const journal = await createJournal({ dir, now: () => now, maxSegmentBytes: 70 });
    await journal.append({ day: 1, i: 0 });
    await journal.append({ day: 1, i: 1 }); // 32 bytes a line: two fit in 70
    await journal.append({ day: 1, i: 2 }); // a third would not: new segment, same day
    now = new Date('2026-03-02T00:00:01Z');
    await journal.append({ day: 2, i: 3 });
    await journal.close();
    expect(await segments()).toEqual([
      'journal-20260301-000000000001.jsonl',
      'journal-20260301-000000000003.jsonl',
      'journal-20260302-000000000004.jsonl',
    ]);
    const reopened = await createJournal({ dir, now: () => now });
    const all = await collect((visit) => reopened.replay(visit));
    expect(all.map((r) => (r.record as { i: number }).i)).toEqual([0, 1, 2, 3]);
    expect(all[2]?.position).toEqual({ seq: 3, segment: 'journal-20260301-000000000003.jsonl', cursor: '3' });
    const since = await collect((visit) => reopened.replay(visit, { since: '2' }));
    expect(since.map((r) => r.position.seq)).toEqual([3, 4]);
    await expect(reopened.replay(() => {}, { since: '../x' })).rejects.toThrow(TypeError);
    // A day's records start after the cursor cursorBeforeDay gives; none written on a later day: null.
    expect(await reopened.cursorBeforeDay('20260301')).toBe('0');
    expect(await reopened.cursorBeforeDay('20260302')).toBe('3');
    const today = await collect((visit) => reopened.replay(visit, { since: '3' }));
    expect(today.map((r) => (r.record as { day: number }).day)).toEqual([2]);
    expect(await reopened.cursorBeforeDay('20260303')).toBeNull();
    await reopened.close();
  });

  it('drops a torn last line on open (a crash mid-write, never acknowledged), then appends cleanly', async () => {
    const journal = await createJournal({ dir });
    for (let i = 0; i < 3; i++) await journal.append({ i });
    await journal.close();
    const [name = ''] = await segments();
    await appendFile(join(dir, name), '{"seq":4,"rec":{"i":3,"pad":"xx');

    const readOnly = await collect((visit) => readJournal(dir, visit));
    expect(readOnly.map((r) => r.position.seq)).toEqual([1, 2, 3]);

    const reopened = await createJournal({ dir });
    expect(await readFile(join(dir, name), 'utf8')).toMatch(/\{"seq":3,"rec":\{"i":2\}\}\n$/);
    expect((await reopened.append({ i: 'after' })).seq).toBe(4);
    const all = await collect((visit) => reopened.replay(visit));
    expect(all.map((r) => r.record)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, { i: 'after' }]);
    await reopened.close();
  });

  it('throws on a corrupt line in the middle: that is real corruption, not a torn write', async () => {
    const journal = await createJournal({ dir });
    for (let i = 0; i < 3; i++) await journal.append({ i });
    await journal.close();
    const [name = ''] = await segments();
    const lines = (await readFile(join(dir, name), 'utf8')).split('\n');
    lines[1] = '{"seq":2,"rec":{"i":1'; // complete line (newline-terminated) that does not parse
    await writeFile(join(dir, name), lines.join('\n'));
    const reopened = await createJournal({ dir });
    await expect(reopened.replay(() => {})).rejects.toBeInstanceOf(JournalCorruptError);
    await expect(readJournal(dir, () => {})).rejects.toThrow(/line 2/);
    await reopened.close();
  });

  it('parses only the lines that hold `match`: the others come as null, in order, with their positions', async () => {
    const journal = await createJournal({ dir });
    await journal.append({ kind: 'receipt', i: 0 });
    await journal.append({ kind: 'hosted_use', i: 1 });
    await journal.appendJson('{"kind":"receipt","i":2,"note":"\\"kind\\":\\"hosted_use\\""}');
    await journal.append({ kind: 'receipt', i: 3 });
    const match = '"kind":"hosted_use"';
    const all = await collect((visit) => journal.replay(visit, { match }));
    expect(all.map((r) => r.record)).toEqual([null, { kind: 'hosted_use', i: 1 }, null, null]);
    expect(all.map((r) => r.position.cursor)).toEqual(['1', '2', '3', '4']);
    const since = await collect((visit) => journal.replay(visit, { since: '1', match }));
    expect(since.map((r) => r.position.seq)).toEqual([2, 3, 4]);
    await journal.close();
    expect((await collect((visit) => readJournal(dir, visit, { match }))).map((r) => r.record)).toEqual(
      all.map((r) => r.record),
    );
  });

  it('still refuses an unparsed line whose frame (prefix, seq, closing brace) is broken, or out of order', async () => {
    const name = 'journal-20260101-000000000001.jsonl';
    const match = 'needle';
    for (const bad of [
      '{"seq":2,"rec":{"a":1',
      '{"seq":02,"rec":{}}',
      '{"seq":2,"re":{}}',
      '{"sq":2,"rec":{}}',
      '{"seq":,"rec":{}}',
    ]) {
      await writeFile(join(dir, name), `{"seq":1,"rec":{}}\n${bad}\n{"seq":3,"rec":{}}\n`);
      await expect(readJournal(dir, () => {}, { match })).rejects.toThrow(/line 2/);
    }
    await writeFile(join(dir, name), '{"seq":2,"rec":{}}\n{"seq":1,"rec":{}}\n');
    await expect(readJournal(dir, () => {}, { match })).rejects.toBeInstanceOf(JournalCorruptError);
    await writeFile(join(dir, name), '{"seq":1,"rec":{}}\n{"seq":2,"rec":{"a":"needle"}}\n');
    expect((await collect((visit) => readJournal(dir, visit, { match }))).map((r) => r.record)).toEqual([
      null,
      { a: 'needle' },
    ]);
  });

  it('throws on out-of-order seq', async () => {
    await writeFile(
      join(dir, 'journal-20260101-000000000001.jsonl'),
      '{"seq":1,"rec":{}}\n{"seq":1,"rec":{}}\n',
    );
    await expect(readJournal(dir, () => {})).rejects.toBeInstanceOf(JournalCorruptError);
  });
});

describe('createJournal: SIGKILL', () => {
  it('loses no acknowledged record and leaves a journal that parses', async () => {
    // node with tsx's loader, not the tsx CLI: the CLI runs the code in a grandchild the kill would miss.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { createJournal } from ${JSON.stringify(join(ROOT, 'io/receipts/journal.ts'))};
         const journal = await createJournal({ dir: ${JSON.stringify(dir)} });
         let next = 0;
         const worker = async () => {
           for (;;) {
             const n = next++;
             await journal.append({ n, pad: 'x'.repeat(300) });
             process.stdout.write(n + '\\n'); // synchronous on a pipe: printed means acknowledged
           }
         };
         for (let w = 0; w < 16; w++) worker();`,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const acked = new Set<number>();
      let buffered = '';
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, signal) => resolve(signal)),
      );
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString('utf8');
          const lines = buffered.split('\n');
          buffered = lines.pop() ?? '';
          for (const line of lines) acked.add(Number(line));
          if (acked.size >= 2000 && !child.killed) {
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.on('exit', () => resolve());
      });
      expect(await exited).toBe('SIGKILL');
      expect(acked.size).toBeGreaterThanOrEqual(2000);

      const journal = await createJournal({ dir }); // takes over the dead writer's lock, cuts any torn tail
      const seen = new Set<number>();
      let lastSeq = 0;
      await journal.replay((record, position) => {
        expect(position.seq).toBeGreaterThan(lastSeq);
        lastSeq = position.seq;
        seen.add((record as { n: number }).n);
      });
      const missing = [...acked].filter((n) => !seen.has(n));
      expect(missing).toEqual([]);
      await journal.append({ after: 'restart' });
      await journal.close();
    } finally {
      // A failed assertion or a timeout must not leave the writer appending into a deleted directory.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
