/**
 * The durable-receipt path alone, to separate its cost from the rest of a check: `io/receipts/journal.ts` group commit
 * (fdatasync on) with BENCH_CONNECTIONS appenders (default 32) for BENCH_JOURNAL_SECONDS (default 5), first alone,
 * then with the DuckDB index (`io/store/duckdb.ts`) receiving every record as the ledger does after each commit.
 * Records are ~3 KB, about the size of a signed check receipt.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createJournal } from '../io/receipts/journal.ts';
import { openDuckDbStore } from '../io/store/duckdb.ts';
import { tempDataDir } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { line, type Summary, summarize } from './_lib/stats.ts';

type Trial = { rate: number; perSync: number; latency: Summary };

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const seconds = intEnv('BENCH_JOURNAL_SECONDS', 5);
  const appenders = intEnv('BENCH_CONNECTIONS', 32);
  console.log(`\n== journal: ${appenders} concurrent appenders, ${seconds} s per trial, fsync on ==`);
  const alone = await trial(false, appenders, seconds);
  const indexed = await trial(true, appenders, seconds);
  const show = (label: string, t: Trial) => {
    console.log(line(label, t.latency));
    console.log(
      `${''.padEnd(34)} ${t.rate.toFixed(0)} appends/s, ${t.perSync.toFixed(1)} records per fdatasync`,
    );
  };
  show('journal alone', alone);
  show('journal + DuckDB index writes', indexed);
  const figures: Figure[] = [
    { name: 'appends/s, journal alone', value: round(alone.rate, 0), unit: '/s' },
    { name: 'append p50, journal alone', value: round(alone.latency.p50, 3), unit: 'ms' },
    { name: 'appends/s, with DuckDB index', value: round(indexed.rate, 0), unit: '/s' },
    { name: 'append p50, with DuckDB index', value: round(indexed.latency.p50, 3), unit: 'ms' },
  ];
  return {
    bench: 'journal',
    figures,
    notes: [
      `${appenders} appenders in one process; records ~3 KB; the index receives every record after its commit`,
    ],
  };
}

async function trial(withIndex: boolean, appenders: number, seconds: number): Promise<Trial> {
  const data = await tempDataDir('journal');
  const journal = await createJournal({ dir: join(data.dir, 'journal'), fsync: true });
  const store = withIndex ? await openDuckDbStore(join(data.dir, 'index.duckdb')) : null;
  const body = { type: 'check', verdict: 'pay', padding: 'x'.repeat(3000) };
  const samples: number[] = [];
  const end = performance.now() + seconds * 1000;
  let n = 0;
  const appender = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      const id = `sc-bench${n++}`;
      await journal.append({ ...body, id });
      samples.push(performance.now() - started);
      store?.indexReceipts([
        {
          id,
          type: 'check',
          issuedAt: new Date().toISOString(),
          url: 'http://127.0.0.1/x',
          urlNorm: 'http://127.0.0.1/x',
          method: 'GET',
          verdict: 'pay',
          reason: 'price_ok',
          checkType: 'dry-run',
          mode: 'live',
          tier: 'exempt',
          body: { ...body, id },
        },
      ]);
    }
  };
  try {
    await Promise.all(Array.from({ length: appenders }, appender));
    const stats = journal.stats();
    return {
      rate: samples.length / seconds,
      perSync: stats.syncs > 0 ? stats.appended / stats.syncs : Number.NaN,
      latency: summarize(samples),
    };
  } finally {
    await journal.close();
    await store?.close();
    await data.remove();
  }
}
