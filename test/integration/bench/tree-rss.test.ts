/**
 * The memory sampler of the site bench (`bench/_lib/tree-rss.ts`): processes of a tree that hold memory at the same
 * time add up, processes that hold it one after the other do not. Real processes, each touching 150 MB.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type TreeRss, watchTreeRss } from '../../../bench/_lib/tree-rss.ts';

const HOLD = `const b = Buffer.alloc(150 * 2 ** 20); b.fill(1);`;
const CHILD = `${HOLD} process.stdout.write('held'); setTimeout(() => b.length, 600);`;

/** Runs `node -e parent` under the sampler; the parent's code may start a child with `child()`. */
async function sampled(parent: string): Promise<TreeRss> {
  const prelude = `const { spawn } = require('node:child_process');
const child = () => new Promise((done) => { const c = spawn(process.execPath, ['-e', ${JSON.stringify(CHILD)}]);
  c.stdout.once('data', () => done(new Promise((exit) => c.on('exit', exit)))); });`;
  const root = spawn(process.execPath, ['-e', `${prelude}\n(async () => { ${parent} })();`]);
  const watch = watchTreeRss(root.pid as number, 20);
  if (watch === null) throw new Error('no /proc here');
  await new Promise((done) => root.on('exit', done));
  return watch.stop();
}

describe.runIf(process.platform === 'linux')('watchTreeRss', () => {
  it('adds up a parent and a child that hold memory at the same time', async () => {
    const tree = await sampled(`${HOLD} const exited = await child(); await exited; b.length;`);
    expect(tree.processes).toHaveLength(2);
    for (const p of tree.processes) expect(p.peakMb).toBeGreaterThanOrEqual(150);
    expect(tree.peakMb).toBeGreaterThanOrEqual(300);
    expect(tree.boundMb).toBeGreaterThanOrEqual(tree.peakMb);
  });

  it('does not add up a child that has exited before the parent takes its memory', async () => {
    const tree = await sampled(
      `await (await child()); await new Promise((r) => setTimeout(r, 100)); ${HOLD} await new Promise((r) => setTimeout(r, 300)); b.length;`,
    );
    expect(tree.processes).toHaveLength(2);
    const [a, b] = tree.processes.map((p) => p.peakMb);
    expect(Math.min(a as number, b as number)).toBeGreaterThanOrEqual(150);
    // Each held 150 MB, never both at once: the tree's peak is one of them plus the other's bare process.
    expect(tree.peakMb).toBeLessThan((a as number) + (b as number) - 100);
    expect(tree.boundMb).toBeLessThan((a as number) + (b as number) - 100);
  });
});
