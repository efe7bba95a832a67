/**
 * The whole sandbox world in one call: the local chain, a second RPC source in front of it, the SDK facilitator,
 * the seller fleet wired to that facilitator and a discovery server listing the fleet. Its state file is what
 * `npm run sandbox` publishes for other processes (the service, the demo, a human with curl).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as v from 'valibot';
import { type Chain, startChain } from './chain.ts';
import { type DiscoveryServer, startDiscovery } from './discovery.ts';
import { type Facilitator, startFacilitator } from './facilitator.ts';
import { type RpcProxy, startRpcProxy } from './rpc-proxy.ts';
import { type SellerFleet, startSellers } from './sellers/index.ts';
import { startTaskSellers, type TaskSellers } from './sellers/task-fleet.ts';

const address = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/u));
const privateKey = v.pipe(v.string(), v.regex(/^0x[0-9a-f]{64}$/u));

/** Schema of the world state file (issue "Sell through x402"; `sellerPayTo` is an addition). */
export const worldStateSchema = v.object({
  rpcUrls: v.pipe(v.array(v.pipe(v.string(), v.url())), v.minLength(2)),
  facilitatorUrl: v.pipe(v.string(), v.url()),
  chainId: v.literal(8453),
  usdc: address,
  buyerKeys: v.array(privateKey),
  serviceWallet: address,
  sellerPayTo: address,
  sellers: v.record(v.string(), v.pipe(v.string(), v.url())),
  /** The discovery server's lists: CDP-shaped, its search, x402scan-shaped, and a broken one. */
  discovery: v.optional(
    v.object({
      cdpUrl: v.pipe(v.string(), v.url()),
      searchUrl: v.pipe(v.string(), v.url()),
      x402scanUrl: v.pipe(v.string(), v.url()),
      brokenUrl: v.pipe(v.string(), v.url()),
    }),
  ),
  /** The known-answer sellers, `<task>/<behaviour>` → URL, and the wallet each is paid into. */
  taskSellers: v.record(v.string(), v.object({ url: v.pipe(v.string(), v.url()), payTo: address })),
  /** The task file naming the task sellers as candidates (written with the state file). */
  tasksFile: v.optional(v.string()),
});

/** What the state file holds: every URL and key a client of the sandbox needs. */
export type WorldState = v.InferOutput<typeof worldStateSchema>;

/** A running world; `stop` ends everything it started and removes the state file it wrote. */
export type World = {
  chain: Chain;
  /** The second RPC source (`state.rpcUrls[1]`); switch it with `setMode` to test source disagreement. */
  rpcProxy: RpcProxy;
  facilitator: Facilitator;
  sellers: SellerFleet;
  discovery: DiscoveryServer;
  taskSellers: TaskSellers;
  state: WorldState;
  stop(): Promise<void>;
};

/**
 * Options of {@link startWorld}. With `port`, anvil listens on `port`, the RPC proxy on `port + 1` and the
 * facilitator on `port + 2`; otherwise all take free ports. Sellers always take free ports.
 */
export type WorldOptions = { port?: number; statePath?: string; tasksPath?: string; buyers?: number };

/** Starts chain, RPC proxy, facilitator and sellers; writes the state file when `statePath` is given. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const cleanups: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const at = (offset: number) => (options.port === undefined ? {} : { port: options.port + offset });
    const chain = await startChain({
      ...at(0),
      ...(options.buyers === undefined ? {} : { buyers: options.buyers }),
    });
    cleanups.push(() => chain.stop());
    const rpcProxy = await startRpcProxy(chain.rpcUrl, at(1));
    cleanups.push(() => rpcProxy.stop());
    const facilitator = await startFacilitator(chain, at(2));
    cleanups.push(() => facilitator.stop());
    const sellers = await startSellers({ facilitator: facilitator.client });
    cleanups.push(() => sellers.close());
    const discovery = await startDiscovery({ sellers: sellers.urls, payTo: sellers.payTo });
    cleanups.push(() => discovery.close());
    const taskSellers = await startTaskSellers({ facilitator: facilitator.client });
    cleanups.push(() => taskSellers.close());

    const state: WorldState = {
      rpcUrls: [chain.rpcUrl, rpcProxy.url],
      facilitatorUrl: facilitator.url,
      chainId: chain.chainId,
      usdc: chain.usdc,
      buyerKeys: chain.buyerKeys,
      serviceWallet: chain.accounts.service.address,
      sellerPayTo: sellers.payTo,
      sellers: { ...sellers.urls },
      discovery: {
        cdpUrl: discovery.cdpUrl,
        searchUrl: discovery.searchUrl,
        x402scanUrl: discovery.x402scanUrl,
        brokenUrl: discovery.brokenUrl,
      },
      taskSellers: taskSellers.sellers,
      ...(options.tasksPath === undefined ? {} : { tasksFile: options.tasksPath }),
    };
    const tasksPath = options.tasksPath;
    if (tasksPath !== undefined) {
      await writeJsonAtomically(tasksPath, taskSellers.tasks, 0o644);
      cleanups.unshift(() => rm(tasksPath, { force: true }));
    }
    const statePath = options.statePath;
    if (statePath !== undefined) {
      await writeWorldState(statePath, state);
      cleanups.unshift(() => rm(statePath, { force: true }));
    }
    return { chain, rpcProxy, facilitator, sellers, discovery, taskSellers, state, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Writes the state file atomically (temp file, then rename), readable by its owner only: it holds keys. */
export async function writeWorldState(path: string, state: WorldState): Promise<void> {
  await writeJsonAtomically(path, state, 0o600);
}

async function writeJsonAtomically(path: string, value: unknown, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode });
  await rename(temp, path);
}

/** Reads and validates a state file written by {@link startWorld} (for the service, the demo and tests). */
export async function readWorldState(path: string): Promise<WorldState> {
  return v.parse(worldStateSchema, JSON.parse(await readFile(path, 'utf8')));
}
