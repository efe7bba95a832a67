/**
 * The sandbox sellers in a process of their own, for the latency bench: a seller is remote in production, so a
 * request to it (the bench's direct GET as much as the service's probe) crosses a process boundary. Run in the
 * bench's own process, the direct GET never left its event loop while the probe woke the bench twice; both now
 * pay the same hop. The child sends `{ urls }` once its sellers listen and exits when the bench goes away.
 */
import { fork } from 'node:child_process';
import type { SellerFleet } from '../../sandbox/sellers/index.ts';

/** The forked fleet: its sellers' URLs and how to stop it. */
export type SellerProcess = { urls: SellerFleet['urls']; close(): Promise<void> };

/** Forks the fleet and resolves once its sellers listen. */
export function startSellerProcess(): Promise<SellerProcess> {
  const child = fork(import.meta.filename, ['--child'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench: the seller process exited (${code})`)));
    child.once('message', (message: { urls: SellerFleet['urls'] }) => {
      child.removeAllListeners('exit');
      resolve({
        urls: message.urls,
        close: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill();
          }),
      });
    });
  });
}

if (process.argv.includes('--child')) {
  const { startSellers } = await import('../../sandbox/sellers/index.ts');
  const fleet = await startSellers();
  process.send?.({ urls: fleet.urls });
  process.on('disconnect', () => process.exit(0));
}
