/**
 * The baseline of the throughput benchmark: a bare h3 v2 app with one route returning a small JSON, served on
 * node:http exactly as `api/service.ts` `listen()` serves the service (same handler adapter, same keep-alive).
 * Started as its own process on HOST:PORT from the environment; stops on SIGTERM.
 */
import { createServer } from 'node:http';
import { H3 } from 'h3';
import { toNodeHandler } from 'h3/node';

const app = new H3().get('/ping', () => ({ ok: true }));
const server = createServer({ maxHeaderSize: 64 * 1024 }, toNodeHandler(app));
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');

process.on('SIGTERM', () => {
  server.close();
  server.closeIdleConnections();
  process.exit(0);
});
