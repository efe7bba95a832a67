/**
 * `npm run sandbox -- [--state <file>] [--tasks <file>] [--port <n>] [--buyers <n>]`: starts the sandbox world,
 * prints what a client needs, writes it to the state file (default `.sandbox-state.json`) and the task file of the
 * known-answer sellers (default `.sandbox-tasks.json`), and runs until SIGINT or SIGTERM.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startWorld, type WorldState } from './world.ts';

const { values } = parseArgs({
  options: {
    state: { type: 'string', default: '.sandbox-state.json' },
    tasks: { type: 'string', default: '.sandbox-tasks.json' },
    port: { type: 'string' },
    buyers: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});

if (values.help) {
  process.stdout.write(
    'usage: npm run sandbox -- [--state <file>] [--tasks <file>] [--port <n>] [--buyers <n>]\n',
  );
  process.exit(0);
}

const port = positiveInt(values.port, 'port');
const buyers = positiveInt(values.buyers, 'buyers');
const statePath = resolve(values.state);
const started = performance.now();
const world = await startWorld({
  statePath,
  tasksPath: resolve(values.tasks),
  ...(port === undefined ? {} : { port }),
  ...(buyers === undefined ? {} : { buyers }),
});
process.stdout.write(describe(world.state, statePath, performance.now() - started));

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping the sandbox…\n`);
    void world.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`sandbox: cleanup failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  });
}

function describe(state: WorldState, path: string, ms: number): string {
  const width = Math.max(...Object.keys(state.sellers).map((name) => name.length));
  const lines = [
    `Sandbox world up in ${Math.round(ms)} ms (Ctrl-C to stop)`,
    '',
    `RPC URLs          ${state.rpcUrls.join('  ')}   (anvil, then a switchable proxy of it)`,
    `Facilitator       ${state.facilitatorUrl}`,
    `Chain id          ${state.chainId}   USDC ${state.usdc}`,
    `Service wallet    ${state.serviceWallet}`,
    `Seller wallet     ${state.sellerPayTo}`,
    'Buyer keys (test only, 100 USDC each, no ETH):',
    ...state.buyerKeys.map((key) => `  ${key}`),
    'Sellers:',
    ...Object.entries(state.sellers).map(([name, url]) => `  ${name.padEnd(width)}  ${url}`),
    ...(state.discovery
      ? [
          'Discovery lists (npm run crawl -- --source <url>):',
          `  CDP-shaped        ${state.discovery.cdpUrl}`,
          `  x402scan-shaped   ${state.discovery.x402scanUrl}`,
          `  search (bazaar)   ${state.discovery.searchUrl}`,
          `  broken            ${state.discovery.brokenUrl}`,
        ]
      : []),
    'Known-answer sellers (each paid into its own wallet):',
    ...Object.entries(state.taskSellers).map(([name, s]) => `  ${name.padEnd(26)}  ${s.url}  ${s.payTo}`),
    `Task file         ${state.tasksFile ?? '(not written)'}`,
    '',
    `State file        ${path}`,
    '',
  ];
  return lines.join('\n');
}

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0) {
    process.stderr.write(`sandbox: --${name} must be a positive integer, got ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
  return parsed;
}
