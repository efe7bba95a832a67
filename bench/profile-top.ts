/**
 * `npx tsx bench/profile-top.ts <file.cpuprofile> [count]`: the top frames of a V8 CPU profile by self time, and
 * self time summed per source file, to name what dominates a benchmark. Profiles come from running a bench with
 * `BENCH_CPU_PROF=<dir>` (the server process is started with `--cpu-prof`).
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import * as v from 'valibot';

const Profile = v.object({
  nodes: v.array(
    v.object({
      id: v.number(),
      callFrame: v.object({ functionName: v.string(), url: v.string(), lineNumber: v.number() }),
    }),
  ),
  samples: v.array(v.number()),
  timeDeltas: v.array(v.number()),
});

/** Self time (ms) per frame and per file of a parsed profile. */
export function topFrames(profile: v.InferOutput<typeof Profile>) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const frames = new Map<string, number>();
  const files = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    const frame = byId.get(id);
    if (!frame) return;
    const file = frame.url ? shorten(frame.url) : `(${frame.functionName || 'native'})`;
    const name = `${frame.functionName || '(anonymous)'}  ${file}:${frame.lineNumber + 1}`;
    frames.set(name, (frames.get(name) ?? 0) + dt);
    files.set(file, (files.get(file) ?? 0) + dt);
  });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { total, frames: sorted(frames), files: sorted(files) };
}

function shorten(url: string): string {
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  const nm = path.lastIndexOf('node_modules/');
  return nm === -1 ? relative(process.cwd(), path) : path.slice(nm + 'node_modules/'.length);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, countText] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/profile-top.ts <file.cpuprofile> [count]');
    process.exit(2);
  }
  const count = Number(countText ?? 25);
  const { total, frames, files } = topFrames(v.parse(Profile, JSON.parse(await readFile(file, 'utf8'))));
  const pct = (x: number) => `${((100 * x) / total).toFixed(1).padStart(5)}%`;
  console.log(`total sampled ${total.toFixed(0)} ms\n-- top frames by self time --`);
  for (const [name, t] of frames.slice(0, count))
    console.log(`${pct(t)} ${t.toFixed(0).padStart(7)} ms  ${name}`);
  console.log('-- self time per file --');
  for (const [name, t] of files.slice(0, count))
    console.log(`${pct(t)} ${t.toFixed(0).padStart(7)} ms  ${name}`);
}
