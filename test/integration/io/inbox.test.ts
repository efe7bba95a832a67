/**
 * The server's inbox (`io/inbox.ts`): operator commands that hand a file over in the same millisecond, under the
 * same name, each keep their own file and get their own answer; nothing published is ever overwritten.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handOver, publishToInbox, watchInbox } from '../../../io/inbox.ts';

let inbox: string;
beforeEach(async () => {
  inbox = await mkdtemp(join(tmpdir(), 'spotcheck-inbox-'));
});
afterEach(async () => {
  await rm(inbox, { recursive: true, force: true });
});

describe('publishToInbox', () => {
  it('two files published under one name at once are two files, neither overwritten', async () => {
    // What two operator commands started in the same millisecond name their files alike (`integrators-<ms>-issue`).
    const name = `integrators-${Date.now()}-issue`;
    const paths = await Promise.all([
      publishToInbox(inbox, name, '{"n":1}'),
      publishToInbox(inbox, name, '{"n":2}'),
    ]);
    expect(new Set(paths).size).toBe(2);
    const files = (await readdir(inbox)).filter((file) => file.endsWith('.json'));
    expect(files).toHaveLength(2);
    const contents = await Promise.all(files.map((file) => readFile(join(inbox, file), 'utf8')));
    expect(contents.sort()).toEqual(['{"n":1}', '{"n":2}']);
    // The routing prefix and the name stay readable at the start of the file name.
    for (const file of files) expect(file.startsWith(name)).toBe(true);
    // No temporary file is left behind.
    expect((await readdir(inbox)).filter((file) => file.endsWith('.tmp'))).toEqual([]);
  });

  it('a second file under the name of one still waiting does not replace it', async () => {
    const name = 'listings-1700000000000-ops';
    await publishToInbox(inbox, name, 'first');
    await publishToInbox(inbox, name, 'second');
    const files = (await readdir(inbox)).filter((file) => file.endsWith('.json'));
    const contents = await Promise.all(files.map((file) => readFile(join(inbox, file), 'utf8')));
    expect(contents.sort()).toEqual(['first', 'second']);
  });

  it('two hand-overs under one name each get the answer to their own file', async () => {
    const watcher = watchInbox(inbox, async (_name, content) => `applied ${content}`, 20);
    try {
      const name = `integrators-${Date.now()}-issue`;
      const [first, second] = await Promise.all([
        handOver(inbox, name, 'one', 10_000),
        handOver(inbox, name, 'two', 10_000),
      ]);
      expect(first).toEqual({ status: 'done', note: 'applied one' });
      expect(second).toEqual({ status: 'done', note: 'applied two' });
    } finally {
      await watcher.stop();
    }
  });
});
