/**
 * `npm run crawl`: reads the listing sources, probes every endpoint once (unpaid, SSRF-gated, at most 3 in flight
 * per host, 12 per registrable domain, 32 per server address), signs a receipt for each and publishes the run under
 * `DATA_DIR/crawl/` (docs/data-files.md). A running server takes the new run in without a restart. When no source
 * could be read it publishes nothing and exits 1 (docs/data-files.md "When a source fails").
 *
 *   npm run crawl -- [--source <url or file>]… [--resume] [--concurrency N] [--limit N]
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dataPaths } from '../io/data-paths.ts';
import { isProcessAlive } from '../io/process-alive.ts';
import { RunLockedError } from '../io/runs/lock.ts';
import { runPaths } from '../io/runs/paths.ts';
import { createAssemblyThread } from './assembly.ts';
import { cliDeps, positiveInt, UsageError } from './cli-deps.ts';
import { NoSourceReadError, NothingToResumeError, runCrawl } from './run.ts';
import { parseSourceConfig, readSource, type SourceSpec, sourceSpecOf } from './sources/read-source.ts';

const USAGE = `usage: npm run crawl -- [options]
  --source <url or file>  a listing source (repeatable; replaces data/sources.json): a discovery list,
                          an x402scan-style list, an origin (its /.well-known/x402) or a listings file;
                          prefix discovery: circle: x402scan: well-known: or file: to name the kind
  --resume                finish the newest unfinished run (no URL is probed twice)
  --concurrency N         most requests in flight overall (default: 3 per host, at most 2048);
                          hosts with time to spare are paced below it once latencies are known
  --limit N               probe only the first N endpoints
environment: DATA_DIR, BASE_URL, PROBE_ALLOW_CIDRS, SIGNING_KEY_FILE (see README)`;

try {
  const { values } = parseArgs({
    options: {
      source: { type: 'string', multiple: true },
      resume: { type: 'boolean', default: false },
      concurrency: { type: 'string' },
      limit: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const options = {
    resume: values.resume === true,
    concurrency: positiveInt(values.concurrency, 'concurrency'),
    limit: positiveInt(values.limit, 'limit'),
  };
  const taken = new Set<string>();
  const specs: SourceSpec[] =
    values.source && values.source.length > 0
      ? values.source.map((s) => sourceSpecOf(s, taken))
      : parseSourceConfig(
          JSON.parse(await readFile(join(import.meta.dirname, '../data/sources.json'), 'utf8')),
        );
  const deps = await cliDeps(process.env);
  const paths = runPaths(deps.config.dataDir, 'crawl');
  // Checks are assembled on a thread of their own, so the event loop stays free for the probes (crawl/assembly.ts).
  const assembly = createAssemblyThread();
  const result = await runCrawl(
    {
      ...deps.endpoint,
      ...deps.politeness,
      assemble: assembly.assemble,
      paths,
      readSources: () => Promise.all(specs.map((spec) => readSource(deps.fetchJson, spec))),
      monotonic: deps.monotonic,
      progressOut: process.stderr,
      log: (line) => console.error(`crawl: ${line}`),
    },
    options,
  ).finally(() => assembly.close());
  const dir = join(paths.root, result.pointer.path);
  console.log(
    [
      `published run ${result.pointer.run_id}: ${result.total} endpoints, ${result.probed} probed now` +
        (result.interrupted > 0 ? `, ${result.interrupted} interrupted` : ''),
      `  files     ${dir}/ (skips/1.json, saves.json, stats.json, receipts/)`,
      (await serverUses(deps.config.dataDir))
        ? `  served by the server on this DATA_DIR at ${deps.config.baseUrl}/v1/skips.json, /saves.json, /rules.json`
        : `  no server uses this DATA_DIR now: \`npm start\` with DATA_DIR=${deps.config.dataDir} serves it`,
    ].join('\n'),
  );
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`crawl: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (
    error instanceof NothingToResumeError ||
    error instanceof NoSourceReadError ||
    error instanceof RunLockedError ||
    error instanceof TypeError
  ) {
    console.error(`crawl: ${(error as Error).message}`);
    process.exit(1);
  }
  throw error;
}

/**
 * True when a live server has this data folder open: its journal's `LOCK` names a running process
 * (io/receipts/journal.ts). Only then does the run's "served at" line name a URL that answers.
 */
async function serverUses(dataDir: string): Promise<boolean> {
  const pid = Number(
    (await readFile(join(dataPaths(dataDir).journal, 'LOCK'), 'utf8').catch(() => '')).trim(),
  );
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isProcessAlive(pid);
}
