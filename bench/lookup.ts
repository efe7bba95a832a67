/**
 * Target: `/v1/lookup` p50 <= 5 ms and p99 <= 20 ms with 1,000,000 paid-call records over 10,000 services
 * in the store. The records are written straight into a fresh DuckDB file (the schema the store creates), the real
 * service (`api/main.ts`, own process) is started over it, and sequential lookups over one keep-alive connection
 * (exempt key, so the free quota never interferes) are timed end to end, rotating over the tasks. Then the same
 * records go into a throwaway PostgreSQL and a service with `DATABASE_URL` is timed the same way; its
 * first lookup, which waits for the recent calls to load, is reported apart.
 * BENCH_LOOKUP_RECORDS, BENCH_LOOKUP_SERVICES and BENCH_LOOKUP_REQUESTS scale it down for a quick run;
 * BENCH_LOOKUP_POSTGRES=0 skips the PostgreSQL pass.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { dataPaths } from '../io/data-paths.ts';
import { openDuckDbStore } from '../io/store/duckdb.ts';
import { connectPostgres } from '../io/store/postgres.ts';
import { postgresMissing, startPostgres } from '../test/helpers/postgres.ts';
import { keepAliveAgent, timedGet } from './_lib/http.ts';
import { startServer, tempDataDir } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { line, ms, type Summary, summarize } from './_lib/stats.ts';

const TASKS = ['weather-current', 'fx-rate', 'token-price', 'geocode', 'translate-short', 'summarize-url'];
const KEY = 'bench-exempt-secret-0123456789abcdef';

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const records = intEnv('BENCH_LOOKUP_RECORDS', 1_000_000);
  const services = intEnv('BENCH_LOOKUP_SERVICES', 10_000);
  const requests = intEnv('BENCH_LOOKUP_REQUESTS', 1000);
  console.log(
    `\n== lookup: ${records} paid calls over ${services} services, ${requests} sequential lookups ==`,
  );
  const data = await tempDataDir('lookup');
  const figures: Figure[] = [];
  try {
    const filled = performance.now();
    await fill(dataPaths(data.dir).database, records, services);
    console.log(`  store filled in ${((performance.now() - filled) / 1000).toFixed(1)} s`);
    const embedded = await timeLookups({ DATA_DIR: data.dir }, requests);
    console.log(line('GET /v1/lookup', embedded.latency));
    figures.push(
      { name: 'lookup p50', value: round(embedded.latency.p50, 3), unit: 'ms', target: { max: 5 } },
      { name: 'lookup p99', value: round(embedded.latency.p99, 3), unit: 'ms', target: { max: 20 } },
    );
  } finally {
    await data.remove();
  }
  if (process.env.BENCH_LOOKUP_POSTGRES !== '0' && postgresMissing === null) {
    const pg = await startPostgres({ durable: true });
    const pgData = await tempDataDir('lookup-postgres');
    try {
      const url = await pg.createDatabase();
      const filled = performance.now();
      await fillPostgres(url, records, services);
      console.log(`  PostgreSQL filled in ${((performance.now() - filled) / 1000).toFixed(1)} s`);
      const shared = await timeLookups({ DATA_DIR: pgData.dir, DATABASE_URL: url }, requests);
      console.log(
        `  first lookup on PostgreSQL (waits for what is left of loading the recent calls): ${ms(shared.firstMs)} ms`,
      );
      console.log(line('GET /v1/lookup, PostgreSQL', shared.latency));
      figures.push(
        {
          name: 'lookup p50, PostgreSQL',
          value: round(shared.latency.p50, 3),
          unit: 'ms',
          target: { max: 5 },
        },
        {
          name: 'lookup p99, PostgreSQL',
          value: round(shared.latency.p99, 3),
          unit: 'ms',
          target: { max: 20 },
        },
        { name: 'first lookup of an instance, PostgreSQL', value: round(shared.firstMs, 1), unit: 'ms' },
      );
    } finally {
      await pgData.remove();
      await pg.stop();
    }
  }
  return {
    bench: 'lookup',
    figures,
    notes: [
      `${records} paid calls, ${services} services over ${TASKS.length} tasks, ${requests} sequential lookups`,
    ],
  };
}

/** Starts the service with `env`, then times its first lookup and, after 50 more, `requests` sequential ones. */
async function timeLookups(
  env: Record<string, string>,
  requests: number,
): Promise<{ firstMs: number; latency: Summary }> {
  const server = await startServer({
    module: 'api/main.ts',
    readyPath: '/healthz',
    env: { ...env, EXEMPT_KEYS: `bench:${KEY}` },
    ...(process.env.BENCH_CPU_PROF ? { cpuProfDir: process.env.BENCH_CPU_PROF } : {}),
  });
  try {
    const agent = keepAliveAgent(1);
    const get = (i: number) =>
      timedGet(`${server.url}/v1/lookup?task=${TASKS[i % TASKS.length]}&max_price=0.05&n=5&limit=10`, {
        agent,
        headers: { 'x-service-key': KEY },
      });
    const first = await get(0);
    const results = (JSON.parse(first.body) as { results?: unknown[] }).results?.length ?? 0;
    if (first.status !== 200 || results === 0)
      throw new Error(`lookup answered ${first.status}: ${first.body}`);
    for (let i = 0; i < 50; i++) await get(i);
    const samples: number[] = [];
    for (let i = 0; i < requests; i++) samples.push((await get(i)).ms);
    agent.destroy();
    return { firstMs: first.ms, latency: summarize(samples) };
  } finally {
    await server.stop();
  }
}

/** Creates the store's schema, then inserts the records in one statement (the store's own writes are per call). */
async function fill(path: string, records: number, services: number): Promise<void> {
  const store = await openDuckDbStore(path);
  await store.close();
  const instance = await DuckDBInstance.create(path);
  const db = await instance.connect();
  try {
    await db.run(`
      INSERT INTO paid_calls (service_id, endpoint_url, host, task, called_at, price_atomic, network, pay_to,
        settlement_tx, delivered, known_answer, http_status, broken_on_seller_side, receipt_id, why)
      SELECT 's' || s || '.bench.example/run', 'https://s' || s || '.bench.example/run', 's' || s || '.bench.example',
        ['${TASKS.join("','")}'][(s % ${TASKS.length}) + 1],
        strftime(TIMESTAMP '2026-11-01 00:00:00' + to_seconds(r), '%Y-%m-%dT%H:%M:%S.000Z'),
        (1000 * (1 + s % 50))::VARCHAR, 'eip155:8453', '0x1111111111111111111111111111111111111111',
        printf('0x%064x', r), r % 17 <> 0,
        CASE WHEN r % 17 = 0 THEN 'fail' WHEN (r + s) % 5 = 0 THEN 'fail' ELSE 'pass' END,
        CASE WHEN r % 17 = 0 THEN 500 ELSE 200 END, r % 17 = 0, 'sc-bench' || r,
        CASE WHEN r % 17 = 0 THEN 'bad_status' ELSE NULL END
      FROM (SELECT range AS r, range % ${services} AS s FROM range(${records}))`);
    await db.run('CHECKPOINT');
  } finally {
    db.closeSync();
    instance.closeSync();
  }
}

/** The same records as {@link fill}, in a PostgreSQL database migrated the way the service migrates it. */
async function fillPostgres(url: string, records: number, services: number): Promise<void> {
  const sql = await connectPostgres(url, { poolSize: 1 });
  try {
    await sql.unsafe(`
      INSERT INTO paid_calls (service_id, endpoint_url, host, task, called_at, price_atomic, network, pay_to,
        settlement_tx, delivered, known_answer, http_status, broken_on_seller_side, receipt_id, why)
      SELECT 's' || s || '.bench.example/run', 'https://s' || s || '.bench.example/run', 's' || s || '.bench.example',
        (ARRAY['${TASKS.join("','")}'])[(s % ${TASKS.length}) + 1],
        to_char(TIMESTAMP '2026-11-01' + r * INTERVAL '1 second', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"'),
        (1000 * (1 + s % 50))::TEXT, 'eip155:8453', '0x1111111111111111111111111111111111111111',
        '0x' || lpad(to_hex(r), 64, '0'), r % 17 <> 0,
        CASE WHEN r % 17 = 0 THEN 'fail' WHEN (r + s) % 5 = 0 THEN 'fail' ELSE 'pass' END,
        CASE WHEN r % 17 = 0 THEN 500 ELSE 200 END, r % 17 = 0, 'sc-bench' || r,
        CASE WHEN r % 17 = 0 THEN 'bad_status' ELSE NULL END
      FROM (SELECT r, r % ${services} AS s FROM generate_series(0, ${records - 1}) AS r) calls`);
    await sql.unsafe('ANALYZE paid_calls');
  } finally {
    await sql.end();
  }
}
