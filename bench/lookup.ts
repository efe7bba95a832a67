/**
 * Issue 8 target: `/v1/lookup` p50 <= 5 ms and p99 <= 20 ms with 1,000,000 paid-call records over 10,000 services
 * in the store. The records are written straight into a fresh DuckDB file (the schema the store creates), the real
 * service (`api/main.ts`, own process) is started over it, and sequential lookups over one keep-alive connection
 * (exempt key, so the free quota never interferes) are timed end to end, rotating over the tasks.
 * BENCH_LOOKUP_RECORDS, BENCH_LOOKUP_SERVICES and BENCH_LOOKUP_REQUESTS scale it down for a quick run.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { dataPaths } from '../io/data-paths.ts';
import { openDuckDbStore } from '../io/duckdb-store.ts';
import { keepAliveAgent, timedGet } from './_lib/http.ts';
import { startServer, tempDataDir } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';
import { line, summarize } from './_lib/stats.ts';

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
  try {
    const database = dataPaths(data.dir).database;
    const filled = performance.now();
    await fill(database, records, services);
    console.log(`  store filled in ${((performance.now() - filled) / 1000).toFixed(1)} s`);
    const server = await startServer({
      module: 'api/main.ts',
      readyPath: '/healthz',
      env: { DATA_DIR: data.dir, EXEMPT_KEYS: `bench:${KEY}` },
      ...(process.env.BENCH_CPU_PROF ? { cpuProfDir: process.env.BENCH_CPU_PROF } : {}),
    });
    try {
      const agent = keepAliveAgent(1);
      const url = (i: number) =>
        `${server.url}/v1/lookup?task=${TASKS[i % TASKS.length]}&max_price=0.05&n=5&limit=10`;
      const first = await timedGet(url(0), { agent, headers: { 'x-service-key': KEY } });
      const results = (JSON.parse(first.body) as { results?: unknown[] }).results?.length ?? 0;
      if (first.status !== 200 || results === 0)
        throw new Error(`lookup answered ${first.status}: ${first.body}`);
      for (let i = 0; i < 50; i++) await timedGet(url(i), { agent, headers: { 'x-service-key': KEY } });
      const samples: number[] = [];
      for (let i = 0; i < requests; i++)
        samples.push((await timedGet(url(i), { agent, headers: { 'x-service-key': KEY } })).ms);
      agent.destroy();
      const latency = summarize(samples);
      console.log(line('GET /v1/lookup', latency));
      const figures: Figure[] = [
        { name: 'lookup p50', value: round(latency.p50, 3), unit: 'ms', target: { max: 5 } },
        { name: 'lookup p99', value: round(latency.p99, 3), unit: 'ms', target: { max: 20 } },
      ];
      return {
        bench: 'lookup',
        figures,
        notes: [
          `${records} paid calls, ${services} services over ${TASKS.length} tasks, ${requests} sequential lookups`,
        ],
      };
    } finally {
      await server.stop();
    }
  } finally {
    await data.remove();
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
