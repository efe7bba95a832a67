/**
 * The baseline of the throughput benchmark: a bare h3 v2 app with one route returning a small JSON, served on
 * node:http exactly as `api/service.ts` `listen()` serves the service (same handler adapter, same keep-alive).
 * Started as its own process on HOST/PORT from the environment; stops on SIGTERM.
 */
import { H3 } from 'h3';
import { serveUntilTerm } from './serve.ts';

serveUntilTerm(new H3().get('/ping', () => ({ ok: true })));
