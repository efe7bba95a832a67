/**
 * How the bench's own servers listen: node:http with h3's node adapter and a 5 s keep-alive, exactly as
 * `api/service.ts` `listen()` serves the service, on HOST/PORT from the environment; SIGTERM closes the server, runs
 * `onStop` and exits.
 */
import { createServer } from 'node:http';
import type { H3 } from 'h3';
import { toNodeHandler } from 'h3/node';

/** Serves `app` until SIGTERM. */
export function serveUntilTerm(app: H3, onStop: () => Promise<void> = async () => {}): void {
  const server = createServer({ maxHeaderSize: 64 * 1024 }, toNodeHandler(app));
  server.keepAliveTimeout = 5_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
  process.on('SIGTERM', () => {
    server.close();
    server.closeIdleConnections();
    void onStop().finally(() => process.exit(0));
  });
}
