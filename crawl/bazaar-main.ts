/**
 * `npm run bazaar-check`: the top N results of a discovery search, each checked like the crawl, published under
 * `DATA_DIR/bazaar/` for `/bazaar.json` with the day's date.
 *
 *   npm run bazaar-check -- [--source <search url>] [--query <text>] [--top N]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RunLockedError } from '../io/runs/lock.ts';
import { runPaths } from '../io/runs/paths.ts';
import { DEFAULT_SEARCH, runBazaarCheck } from './bazaar.ts';
import { cliDeps, positiveInt, UsageError } from './cli-deps.ts';

const USAGE = `usage: npm run bazaar-check -- [options]
  --source <url>   a discovery search (default ${DEFAULT_SEARCH})
  --query <text>   what to search for (default "api")
  --top N          how many results to check (default 20, at most 1000)
environment: DATA_DIR, BASE_URL, PROBE_ALLOW_CIDRS, SIGNING_KEY_FILE (see README)`;

try {
  const { values } = parseArgs({
    options: {
      source: { type: 'string' },
      query: { type: 'string' },
      top: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const top = positiveInt(values.top, 'top') ?? 20;
  if (top > 1000) throw new UsageError('--top is at most 1000');
  const source = values.source ?? DEFAULT_SEARCH;
  if (!URL.canParse(source)) throw new UsageError('--source is a URL');
  const deps = await cliDeps(process.env);
  const paths = runPaths(deps.config.dataDir, 'bazaar');
  const done = await runBazaarCheck(
    { ...deps.endpoint, ...deps.politeness, paths, fetchJson: deps.fetchJson, monotonic: deps.monotonic },
    { source, query: values.query ?? 'api', top },
  );
  console.log(
    [
      `published bazaar check ${done.pointer.run_id}: ${done.checked} checked; search ${done.report.ok ? 'ok' : 'FAILED'}: ${done.report.note}`,
      `  file      ${join(paths.root, done.pointer.path, 'bazaar.json')}`,
      `  served by npm start at ${deps.config.baseUrl}/bazaar.json`,
    ].join('\n'),
  );
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`bazaar-check: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (error instanceof TypeError || error instanceof RunLockedError) {
    console.error(`bazaar-check: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
