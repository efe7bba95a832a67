/**
 * `npm run bench`: runs every benchmark in sequence, or those named (`npm run bench -- check` runs every bench
 * whose name starts with `check`), then prints a summary with the date and the machine. Loopback only; every
 * bench stops its own processes. `--json <file>` also writes the results as JSON (for BENCHMARKS.md).
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { postgresMissing } from '../test/helpers/postgres.ts';
import { removeLeftovers } from './_lib/processes.ts';
import { type BenchModule, type Result, targetText, verdictOf } from './_lib/result.ts';

type Entry = { name: string; load: () => Promise<BenchModule | null>; timeoutMs?: number };

/**
 * The benchmarks, in the order they run. `payment-status` is a hook for the engineer who owns payment status:
 * once `bench/payment-status.ts` exports `run(): Promise<Result>`, it runs here; until then it is skipped.
 */
const BENCHES: Entry[] = [
  { name: 'check-latency', load: () => import('./check-latency.ts') },
  { name: 'check-throughput', load: () => import('./check-throughput.ts') },
  // Skipped (test/helpers/postgres.ts says why) where PostgreSQL's binaries are not installed.
  { name: 'check-postgres', load: async () => (postgresMissing ? null : import('./check-postgres.ts')) },
  { name: 'hosted-throughput', load: () => import('./hosted-throughput.ts') },
  { name: 'invoices', load: () => import('./invoices.ts') },
  { name: 'paid-check', load: () => import('./paid-check.ts') },
  { name: 'guard', load: () => import('./guard.ts') },
  { name: 'mcp-check', load: () => import('./mcp-check.ts') },
  { name: 'check-challenge', load: () => import('./check-challenge.ts') },
  { name: 'journal', load: () => import('./journal.ts') },
  { name: 'crawl', load: () => import('./crawl.ts') },
  // 50,000 listings behind a dominant host's bound of about 10 minutes.
  { name: 'crawl-catalog', load: () => import('./crawl-catalog.ts'), timeoutMs: 1_200_000 },
  // Writes and signs a 50,000-receipt run first (minutes on two cores), then waits up to 10 minutes for the ingest.
  { name: 'crawl-ingest', load: () => import('./crawl-ingest.ts'), timeoutMs: 1_200_000 },
  { name: 'lookup', load: () => import('./lookup.ts') },
  { name: 'payment-status', load: () => optional('./payment-status.ts') },
  // Writes and builds 100,000 receipts: minutes, not seconds.
  { name: 'site', load: () => import('./site.ts'), timeoutMs: 900_000 },
  // Writes a 100,000-receipt history and builds it three times.
  { name: 'site-history', load: () => import('./site-history.ts'), timeoutMs: 900_000 },
  // Indexes 50,000 endpoints with the site's own code (minutes on two cores), then times searches in chromium.
  { name: 'site-search', load: () => import('./site-search.ts'), timeoutMs: 600_000 },
  // Builds the showcase site, then Lighthouse on three pages in Debian's chromium.
  { name: 'site-lighthouse', load: () => import('./lighthouse.ts'), timeoutMs: 600_000 },
  // A burst of 10,000 webhooks and 200 changes timed from the probe that saw them to the receiver.
  { name: 'watches-delivery', load: () => import('./watches-delivery.ts'), timeoutMs: 600_000 },
  // 100,000 watches probed for 1.5 intervals of 10 minutes.
  { name: 'watches-scale', load: () => import('./watches-scale.ts'), timeoutMs: 1_500_000 },
];

/** Hard limit per bench; each is designed to take well under a minute. */
const BENCH_TIMEOUT_MS = 180_000;

const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
const jsonFile = jsonAt === -1 ? null : (args[jsonAt + 1] ?? null);
const names = args.filter((arg, i) => !arg.startsWith('--') && (jsonAt === -1 || i !== jsonAt + 1));
const chosen = names.length === 0 ? BENCHES : BENCHES.filter((b) => names.some((n) => b.name.startsWith(n)));
if (chosen.length === 0) {
  console.error(
    `bench: no benchmark matches ${names.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`,
  );
  process.exit(2);
}

const machine = {
  date: new Date().toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  ramGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
};
console.log(
  `Spotcheck benchmarks, ${machine.date}, Node ${machine.node}, ${machine.cpu} x ${machine.cores} cores, ${machine.ramGiB} GiB RAM`,
);

const results: Result[] = [];
const failures: string[] = [];
for (const entry of chosen) {
  const started = Date.now();
  try {
    const module = await entry.load();
    if (module === null) {
      console.log(`\n== ${entry.name}: not written yet (bench/${entry.name}.ts), skipped ==`);
      continue;
    }
    // BENCH_TIMEOUT_S replaces every bench's limit: a bench run at the full scale (site-history's 1,000,000
    // receipts) takes longer than its default size was given.
    const limitMs = process.env.BENCH_TIMEOUT_S ? Number(process.env.BENCH_TIMEOUT_S) * 1000 : null;
    const result = await withTimeout(
      module.run(),
      limitMs ?? entry.timeoutMs ?? BENCH_TIMEOUT_MS,
      entry.name,
    );
    results.push(result);
    console.log(`(${entry.name} took ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    failures.push(entry.name);
    console.error(`\n!! ${entry.name} failed:`, error);
  }
}

printSummary(results);
await removeLeftovers();
if (jsonFile) await writeFile(jsonFile, `${JSON.stringify({ machine, results }, null, 2)}\n`);
if (failures.length > 0) console.error(`\nfailed: ${failures.join(', ')}`);
// Sockets of stopped servers may linger in TIME_WAIT handles; the benches are done, so leave now.
process.exit(failures.length > 0 ? 1 : 0);

function printSummary(all: Result[]): void {
  console.log(
    `\n== summary (${machine.date.slice(0, 10)}, Node ${machine.node}, ${machine.cpu}, ${machine.cores} cores) ==`,
  );
  const rows = all.flatMap((r) =>
    r.figures.map((f) => [r.bench, f.name, `${f.value} ${f.unit}`, targetText(f), verdictOf(f)]),
  );
  const header = ['bench', 'figure', 'value', 'target', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const show = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ');
  console.log(show(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(show(row));
  for (const r of all) for (const note of r.notes) console.log(`note (${r.bench}): ${note}`);
}

/** Imports a bench that may not exist yet; a path held in a variable keeps the type checker from requiring it. */
async function optional(path: string): Promise<BenchModule | null> {
  const url = new URL(path, import.meta.url);
  // Only a missing file means "not written yet"; a broken module must fail loudly.
  if (!existsSync(url)) return null;
  const module: unknown = await import(url.href);
  if (typeof (module as { run?: unknown }).run !== 'function')
    throw new TypeError(`bench: ${path} must export run(): Promise<Result>`);
  return module as BenchModule;
}

function withTimeout<T>(promise: Promise<T>, limitMs: number, name: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} exceeded ${limitMs / 1000} s`)), limitMs);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
