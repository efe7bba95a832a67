/**
 * Target: "PostgreSQL: one instance's cached-check throughput >= 60 % of the embedded default in the same
 * run; added latency p50 <= 3 ms", every answer carrying a receipt acknowledged only once committed in PostgreSQL
 * (and fsynced in the journal).
 *
 * Method: a throwaway PostgreSQL cluster (`test/helpers/postgres.ts`, Debian's binaries; fsync on, synchronous_commit
 * on, as in production), and two service processes started the same way (`api/main.ts`): the embedded default, and
 * one with `DATABASE_URL`, both running throughout. The request is an exempt check of one seller URL already in the
 * probe cache. Throughput: the same closed-loop load (BENCH_CONNECTIONS, default 32) runs against each in turn, in
 * two rounds of BENCH_SECONDS / 2 (default 10 s in all per service), so a change of the machine's load during the
 * run falls on both. Added latency: one connection to each, requests alternating between the two for
 * BENCH_LATENCY_SECONDS (default 6), where a request's time is its own and not the queue's; the p50 with PostgreSQL
 * minus the p50 embedded. Afterwards the receipts table is counted: one row per 200 answer.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { startSellers } from '../sandbox/sellers/index.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { checkUrl, keepAliveAgent, timedGet } from './_lib/http.ts';
import { type LoadResult, runLoad } from './_lib/load.ts';
import { serverCpuMs } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { type BenchService, startService } from './_lib/service.ts';
import { line, type Summary, summarize } from './_lib/stats.ts';
import { receiptOf } from './_lib/throughput-checks.ts';
import { treeCpuMs } from './_lib/tree-rss.ts';

const TARGET_RATIO_PCT = 60;
const TARGET_ADDED_P50_MS = 3;

type Side = {
  label: string;
  service: BenchService;
  url: string;
  answered: number;
  loads: LoadResult[];
  /** CPU over the loads at 32 connections (warm-ups included), ms: the service's, and PostgreSQL's server's. */
  cpuMs: number;
  databaseCpuMs: number;
};

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const seconds = intEnv('BENCH_SECONDS', 10);
  const warmupSeconds = intEnv('BENCH_WARMUP_SECONDS', 2);
  const connections = intEnv('BENCH_CONNECTIONS', 32);
  const latencySeconds = intEnv('BENCH_LATENCY_SECONDS', 6);
  console.log(
    `\n== check-postgres: ${connections} connections, ${warmupSeconds} s warm-up + ${seconds} s each; ${latencySeconds} s alternating on 1 connection ==`,
  );
  const fleet = await startSellers();
  const pg = await startPostgres({ durable: true });
  const sides: Side[] = [];
  try {
    const databaseUrl = await pg.createDatabase();
    for (const [label, env] of [
      ['embedded (DuckDB)', {}],
      ['DATABASE_URL (PostgreSQL)', { DATABASE_URL: databaseUrl }],
    ] as const) {
      const service = await startService(env);
      sides.push({
        label,
        service,
        url: checkUrl(service.url, fleet.urls['sdk-ok']),
        answered: 0,
        loads: [],
        cpuMs: 0,
        databaseCpuMs: 0,
      });
    }
    for (const side of sides) await prime(side);
    const postmaster = Number((await readFile(join(pg.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    for (let round = 0; round < 2; round++) {
      for (const side of sides) {
        const before = { stats: await side.service.stats(), database: treeCpuMs(postmaster) };
        const result = await runLoad({
          connections,
          warmupMs: round === 0 ? warmupSeconds * 1000 : 500,
          durationMs: (seconds * 1000) / 2,
          url: side.url,
          headers: side.service.headers,
          accept: (a) => receiptOf(a) !== null,
        });
        if (result.errors > 0) throw new Error(`bench: ${side.label}: ${result.firstError}`);
        side.cpuMs += serverCpuMs(await side.service.stats(), before.stats);
        side.databaseCpuMs += treeCpuMs(postmaster) - before.database;
        side.answered += result.acceptedTotal;
        side.loads.push(result);
      }
    }
    const single = await alternate(sides, latencySeconds * 1000);
    const [embedded, shared] = sides as [Side, Side];
    const rps = (side: Side) => side.loads.reduce((sum, l) => sum + l.requests, 0) / seconds;
    // Answers over the same loads as the CPU, warm-ups included.
    const loadAnswers = (side: Side) =>
      Math.max(
        1,
        side.loads.reduce((sum, l) => sum + l.acceptedTotal, 0),
      );
    const cpuPerAnswer = (side: Side) => side.cpuMs / loadAnswers(side);
    const databaseCpuPerAnswer = (side: Side) => side.databaseCpuMs / loadAnswers(side);
    const p50 = (side: Side) =>
      side.loads.map((l) => l.latency.p50).reduce((a, b) => a + b) / side.loads.length;
    for (const [i, side] of sides.entries()) {
      console.log(`${side.label}: ${rps(side).toFixed(0)} req/s at ${connections} connections`);
      console.log(line(`  ${connections} conn. (last round)`, side.loads.at(-1)!.latency));
      console.log(line('  1 conn., alternating', single[i]!));
      console.log(
        `  CPU per answer at ${connections} connections: service ${cpuPerAnswer(side).toFixed(3)} ms, PostgreSQL's server ${databaseCpuPerAnswer(side).toFixed(3)} ms`,
      );
    }

    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const [row] = await sql`SELECT count(*)::int AS n FROM receipts`;
    await sql.end();
    const rows = Number(row?.n ?? 0);
    const ratio = (100 * rps(shared)) / rps(embedded);
    const addedP50 = single[1]!.p50 - single[0]!.p50;
    console.log(
      `ratio: ${ratio.toFixed(1)} % of the embedded default (target >= ${TARGET_RATIO_PCT} %: ${ratio >= TARGET_RATIO_PCT ? 'PASS' : 'MISS'})`,
    );
    console.log(
      `added latency p50: ${addedP50.toFixed(2)} ms (target <= ${TARGET_ADDED_P50_MS} ms: ${addedP50 <= TARGET_ADDED_P50_MS ? 'PASS' : 'MISS'})`,
    );
    console.log(
      `durability: ${shared.answered} answers with a receipt id, ${rows} receipt rows in PostgreSQL: ${rows === shared.answered ? 'OK' : 'MISMATCH'}`,
    );
    if (rows !== shared.answered) throw new Error('bench: receipt rows do not match the answers');
    const figures: Figure[] = [
      { name: 'embedded cached check', value: round(rps(embedded), 0), unit: 'req/s' },
      { name: 'postgres cached check', value: round(rps(shared), 0), unit: 'req/s' },
      { name: `embedded p50, ${connections} conn.`, value: round(p50(embedded), 3), unit: 'ms' },
      { name: `postgres p50, ${connections} conn.`, value: round(p50(shared), 3), unit: 'ms' },
      { name: 'embedded p50, 1 conn.', value: round(single[0]!.p50, 3), unit: 'ms' },
      { name: 'embedded CPU per answer', value: round(cpuPerAnswer(embedded), 3), unit: 'ms' },
      { name: 'postgres instance CPU per answer', value: round(cpuPerAnswer(shared), 3), unit: 'ms' },
      { name: 'postgres server CPU per answer', value: round(databaseCpuPerAnswer(shared), 3), unit: 'ms' },
      { name: 'postgres p50, 1 conn.', value: round(single[1]!.p50, 3), unit: 'ms' },
      { name: 'postgres / embedded', value: round(ratio, 1), unit: '%', target: { min: TARGET_RATIO_PCT } },
      {
        name: 'postgres added p50',
        value: round(addedP50, 3),
        unit: 'ms',
        target: { max: TARGET_ADDED_P50_MS },
      },
    ];
    return {
      bench: 'check-postgres',
      figures,
      notes: [
        `${connections} keep-alive connections, closed loop, two rounds of ${seconds / 2} s per service after ${warmupSeconds} s warm-up; added latency on 1 connection per service, alternating, ${latencySeconds} s; load generator, services and PostgreSQL on the same cores`,
        `PostgreSQL ${pg.version}, fsync on, synchronous_commit on, pool 10; ${rows} receipt rows = ${shared.answered} answers`,
      ],
    };
  } finally {
    for (const side of sides) {
      await side.service.stop();
      await side.service.remove();
    }
    await pg.stop();
    await fleet.close();
  }
}

/** One check, so the seller's probe is in the service's cache before anything is measured. */
async function prime(side: Side): Promise<void> {
  const res = await fetch(side.url, { headers: side.service.headers });
  if (res.status !== 200) throw new Error(`bench: ${side.label}: priming check failed (${res.status})`);
  await res.body?.cancel();
  side.answered += 1;
}

/** Requests alternating between the sides, one connection each, for `durationMs`; each side's latency summary. */
async function alternate(sides: Side[], durationMs: number): Promise<Summary[]> {
  const agents = sides.map(() => keepAliveAgent(1));
  const samples: number[][] = sides.map(() => []);
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    for (const [i, side] of sides.entries()) {
      const answer = await timedGet(side.url, { agent: agents[i]!, headers: side.service.headers });
      if (receiptOf(answer) === null) throw new Error(`bench: ${side.label}: ${answer.status}`);
      side.answered += 1;
      samples[i]!.push(answer.ms);
    }
  }
  for (const agent of agents) agent.destroy();
  return samples.map((s) => summarize(s));
}
