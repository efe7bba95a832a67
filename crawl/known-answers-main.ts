/**
 * `npm run known-answers -- --tasks <file> [--task <name>] [--n 3] --budget-usd <usd> [--resume]`: the service's
 * own known-answer calls, paid from a wallet of the run's own that the wallet whose key is in `PAYER_KEY_FILE`
 * funds (`io/runs/wallet.ts`), published under `DATA_DIR/known-answers/` for the running server to take in.
 * Environment: `DATA_DIR`, `BASE_URL`, `SIGNING_KEY_FILE`, `PROBE_ALLOW_CIDRS` (as the server reads them),
 * `PAYER_KEY_FILE` (required: a file holding one 0x-prefixed 32-byte hex private key), `RPC_URLS` (the first is the
 * Base JSON-RPC endpoint the funding transfer goes through; required for a budget above zero).
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { privateKeyToAccount } from 'viem/accounts';
import { createBudget, scaledUsdText } from '../core/budget.ts';
import { parseTasks } from '../core/tasks.ts';
import { dataPaths } from '../io/data-paths.ts';
import { readEnv, SHARED_ENV, sharedConfigOf } from '../io/environment.ts';
import { loadSigningKeys } from '../io/keys.ts';
import { runKnownAnswers } from './known-answers.ts';
import { knownAnswerDeps } from './known-answers-deps.ts';

const USAGE =
  'usage: npm run known-answers -- --tasks <file> [--task <name>] [--n <1-20>] --budget-usd <usd> [--resume]\n';

function fail(message: string, code = 2): never {
  process.stderr.write(`known-answers: ${message}\n`);
  process.exit(code);
}

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'data/tasks.json' },
    task: { type: 'string', multiple: true },
    n: { type: 'string', default: '3' },
    'budget-usd': { type: 'string' },
    resume: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const n = Number(values.n);
if (!Number.isSafeInteger(n) || n < 1 || n > 20) fail(`--n must be an integer from 1 to 20, got ${values.n}`);
const budgetUsd = values['budget-usd'];
if (budgetUsd === undefined) fail(`--budget-usd is required\n${USAGE}`);
const budget = createBudget(budgetUsd);
if (budget === null) fail(`--budget-usd must be a non-negative USD amount, got ${budgetUsd}`);

const env = readEnv(
  v.object({
    ...SHARED_ENV,
    PAYER_KEY_FILE: v.pipe(v.string(), v.minLength(1)),
    RPC_URLS: v.optional(v.string(), ''),
  }),
  process.env,
);
const shared = sharedConfigOf(env);
const payerKeyFile = env.PAYER_KEY_FILE;
const payerKey = (
  await readFile(payerKeyFile, 'utf8').catch(() => fail(`cannot read ${payerKeyFile}`))
).trim();
if (!/^0x[0-9a-fA-F]{64}$/.test(payerKey))
  fail(`${payerKeyFile} does not hold a 0x-prefixed 32-byte hex key`);
const account = privateKeyToAccount(payerKey as `0x${string}`);
const rpcUrl =
  env.RPC_URLS.split(',')
    .map((url) => url.trim())
    .find((url) => url.length > 0) ?? null;
if (rpcUrl === null && budget.limit > 0n)
  fail('RPC_URLS is required: the run wallet is funded on Base through it');

const parsed = parseTasks(
  JSON.parse(await readFile(values.tasks, 'utf8').catch(() => fail(`cannot read ${values.tasks}`))),
);
if (!parsed.ok) fail(`${values.tasks}: ${parsed.message}`);
const wanted = values.task ?? [];
const unknown = wanted.filter((name) => !parsed.value.some((task) => task.name === name));
if (unknown.length > 0) fail(`no task named ${unknown.join(', ')} in ${values.tasks}`);
const tasks = wanted.length === 0 ? parsed.value : parsed.value.filter((task) => wanted.includes(task.name));

const keys = await loadSigningKeys({
  dir: dataPaths(shared.dataDir).keys,
  ...(shared.signingKeyFile ? { keyFile: shared.signingKeyFile } : {}),
});
process.stderr.write(`known-answers: funded from ${account.address}, budget USD ${budgetUsd}\n`);

const result = await runKnownAnswers(
  knownAnswerDeps({
    dataDir: shared.dataDir,
    baseUrl: shared.baseUrl,
    allowCidrs: shared.probeAllowCidrs,
    payerKey: payerKey as `0x${string}`,
    rpcUrl,
    signer: keys.signer,
    progressOut: process.stderr,
    log: (line) => process.stderr.write(`known-answers: ${line}\n`),
  }),
  { tasks, catalog: parsed.value, n, budgetUsd, resume: values.resume },
).catch((error: unknown) => fail(error instanceof Error ? error.message : String(error), 1));
const spent = scaledUsdText(result.committed);
process.stdout.write(
  `published run ${result.runId}: ${result.paid} paid calls, ${result.refused} refused, ` +
    `USD ${spent} of ${budgetUsd} signed, from ${result.payer}\n`,
);
