/**
 * `npm run known-answers -- --tasks <file> [--task <name>] [--n 3] --budget-usd <usd> [--resume]` (issue 8 item 2):
 * the service's own known-answer calls, paid from the wallet whose key is in `PAYER_KEY_FILE`, published under
 * `DATA_DIR/known-answers/` for the running server to take in. Environment: `DATA_DIR`, `BASE_URL`,
 * `SIGNING_KEY_FILE`, `PROBE_ALLOW_CIDRS` (as the server reads them), `PAYER_KEY_FILE` (required: a file holding one
 * 0x-prefixed 32-byte hex private key).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { createBudget, usdText } from '../core/budget.ts';
import { parseCidrList } from '../core/ssrf.ts';
import { parseTasks } from '../core/tasks.ts';
import { runPaths } from '../io/crawl-runs.ts';
import { loadSigningKeys } from '../io/keys.ts';
import { createPayingClient } from '../io/paying-client.ts';
import { createProber } from '../io/prober.ts';
import { runKnownAnswers } from './known-answers.ts';

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

const env = process.env;
const payerKeyFile = env.PAYER_KEY_FILE;
if (!payerKeyFile) fail('PAYER_KEY_FILE must name the file holding the paying wallet key');
const payerKey = (
  await readFile(payerKeyFile, 'utf8').catch(() => fail(`cannot read ${payerKeyFile}`))
).trim();
if (!/^0x[0-9a-fA-F]{64}$/.test(payerKey))
  fail(`${payerKeyFile} does not hold a 0x-prefixed 32-byte hex key`);
const account = privateKeyToAccount(payerKey as `0x${string}`);

const parsed = parseTasks(
  JSON.parse(await readFile(values.tasks, 'utf8').catch(() => fail(`cannot read ${values.tasks}`))),
);
if (!parsed.ok) fail(`${values.tasks}: ${parsed.message}`);
const wanted = values.task ?? [];
const unknown = wanted.filter((name) => !parsed.value.some((task) => task.name === name));
if (unknown.length > 0) fail(`no task named ${unknown.join(', ')} in ${values.tasks}`);
const tasks = wanted.length === 0 ? parsed.value : parsed.value.filter((task) => wanted.includes(task.name));

const dataDir = resolve(env.DATA_DIR || './data/runtime');
const baseUrl = (env.BASE_URL || `http://${env.HOST || '127.0.0.1'}:${env.PORT || '8402'}`).replace(
  /\/+$/,
  '',
);
const keys = await loadSigningKeys({
  dir: join(dataDir, 'keys'),
  ...(env.SIGNING_KEY_FILE ? { keyFile: env.SIGNING_KEY_FILE } : {}),
});
const allow = parseCidrList(env.PROBE_ALLOW_CIDRS ?? '');
process.stderr.write(`known-answers: paying from ${account.address}, budget USD ${budgetUsd}\n`);

const result = await runKnownAnswers(
  {
    paths: runPaths(dataDir, 'known-answers'),
    prober: createProber({ allow, now: () => new Date() }),
    payerFor: (left) => createPayingClient({ account, budget: left }),
    signer: keys.signer,
    now: () => new Date(),
    random: (size) => randomBytes(size),
    baseUrl,
    monotonic: () => performance.now(),
    progressOut: process.stderr,
    log: (line) => process.stderr.write(`known-answers: ${line}\n`),
  },
  { tasks, n, budgetUsd, resume: values.resume },
);
const spent = usdText(result.committed);
process.stdout.write(
  `published run ${result.runId}: ${result.paid} paid calls, ${result.refused} refused, ` +
    `USD ${spent} of ${budgetUsd} signed\n`,
);
