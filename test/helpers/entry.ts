/**
 * How the tests start the project's own entry files (the server, the operator CLIs, the crawl) in a child process:
 * `process.execPath <file>`, on the Node that runs the tests, which strips the types itself (the sources keep to
 * erasable syntax, `erasableSyntaxOnly` in tsconfig.json), rather than through tsx as the npm scripts run them. tsx's
 * hooks resolve and load each of the some 1,400 modules of a server's start (its cache spares only the compiling),
 * which doubled the time to the listening line on a busy machine. `test/e2e/node-runtime.test.ts` still runs the
 * npm scripts themselves (`npm start`, `npm run verify`).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The environment an entry file's child gets on top of its own: V8's compile cache, kept per user across runs (Node
 * checks each entry against its file's contents) and written by a child that exits cleanly.
 */
export const ENTRY_ENV: Record<string, string> = {
  NODE_COMPILE_CACHE: join(tmpdir(), `spotcheck-test-compile-cache-${process.getuid?.() ?? 'user'}`),
};
