/**
 * The known-answer part of `npm run demo`: pays the sandbox's task sellers through a known-answer run,
 * lets the running service take the run in, and prints the ranked lookup.
 */
import { parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { parseTasks } from '../core/tasks.ts';
import { runKnownAnswers } from '../crawl/known-answers.ts';
import { knownAnswerDeps } from '../crawl/known-answers-deps.ts';
import { dataPaths } from '../io/data-paths.ts';
import { loadSigningKeys } from '../io/keys.ts';
import type { World } from './world.ts';

type Entry = {
  endpoint: string;
  price_usd: number | null;
  calls: number;
  pass_rate: number | null;
  delivered_rate: number;
};

/**
 * Runs 3 paid calls per task seller within USD 4, from a wallet of the run's own funded by buyer `buyer`, then
 * prints `/v1/lookup` for `sandbox-fx`.
 */
export async function tourKnownAnswers(options: {
  world: World;
  url: string;
  dataDir: string;
  buyer: number;
  /** The demo's exempt key: the lookup it prints spends none of the visitor's free lookups. */
  serviceKey: string;
  out: (line: string) => void;
}): Promise<void> {
  const { world, out } = options;
  const tasks = parseTasks(world.taskSellers.tasks);
  if (!tasks.ok) throw new Error(`sandbox task file: ${tasks.message}`);
  const keys = await loadSigningKeys({ dir: dataPaths(options.dataDir).keys });
  const payerKey = world.state.buyerKeys[options.buyer] as `0x${string}`;
  const funder = privateKeyToAccount(payerKey).address;
  // Sandbox buyers hold no ETH (EIP-3009 payments are gasless); funding the run's wallet is a plain transfer.
  await world.chain.testClient.setBalance({ address: funder, value: parseEther('1') });
  const result = await runKnownAnswers(
    knownAnswerDeps({
      dataDir: options.dataDir,
      baseUrl: options.url,
      allowCidrs: '127.0.0.0/8',
      payerKey,
      rpcUrl: world.state.rpcUrls[0] ?? null,
      signer: keys.signer,
      progressOut: { write: () => true },
      log: (line) => out(`      ${line}`),
    }),
    { tasks: tasks.value, n: 3, budgetUsd: '4', resume: false },
  );
  out(
    `      run ${result.runId}: ${result.paid} paid calls, ${result.refused} refused, paid from ${result.payer} (funded by ${funder}); published, taken in by the running service`,
  );
  const query = 'task=sandbox-fx&max_price=0.05&n=3';
  const body = (await (
    await fetch(`${options.url}/v1/lookup?${query}`, { headers: { 'x-service-key': options.serviceKey } })
  ).json()) as {
    results: Entry[];
    facts_only: Entry[];
  };
  const names = new Map(
    Object.entries(world.state.taskSellers).map(([name, s]) => [new URL(s.url).href, name]),
  );
  const row = (e: Entry) =>
    `${(names.get(e.endpoint) ?? e.endpoint).padEnd(24)} $${e.price_usd}  pass ${e.pass_rate}  delivered ${e.delivered_rate}  calls ${e.calls}`;
  out(`      GET /v1/lookup?${query}`);
  for (const [i, e] of body.results.entries()) out(`        ${i + 1}. ${row(e)}`);
  for (const e of body.facts_only) out(`        facts_only: ${row(e)}`);
  out(
    '        (sandbox-fx/expensive asks $0.50: outside max_price; sandbox-fx/constant answers one memorized body)',
  );
}
