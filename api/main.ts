/**
 * `npm start`: the live service on HOST:PORT with the embedded defaults (README "Configuration").
 */
import { readConfig } from './config.ts';
import { createService, listen } from './service.ts';

const config = readConfig(process.env);
const service = await createService(config);
const { server, url } = await listen(service, config.host, config.port);

console.log(`[spotcheck] listening on ${url} on Node ${process.version} (receipts name ${config.baseUrl})`);
console.log(`[spotcheck] data in ${config.dataDir}`);
if (config.database) {
  // The host and database only: the URL may carry a password.
  const { host, pathname } = new URL(config.database.url);
  console.log(
    `[spotcheck] shared state in PostgreSQL at ${host}${pathname} (pool of ${config.database.poolSize})`,
  );
}
if (service.serviceWallet.generated) {
  console.log(
    `[spotcheck] SERVICE_WALLET not set: payments go to ${service.serviceWallet.address}, whose key is in ${service.serviceWallet.keyFile}`,
  );
}
if (!config.facilitatorUrl)
  console.log('[spotcheck] FACILITATOR_URL not set: 402s are answered, payments are refused (502)');

/**
 * How long a clean close may take (it checkpoints the index, writes pending receipt files, ends the database pool):
 * `SHUTDOWN_DEADLINE_MS`, 30 s by default. Past it, or on a second signal, the process exits as a SIGKILL would:
 * every acknowledged receipt is in the journal (and committed in PostgreSQL), and the next start replays what the
 * views lack (CONTRIBUTING.md, "Durability"). So a stuck database never makes a supervisor's stop hang.
 */
const CLOSE_DEADLINE_MS = config.shutdownDeadlineMs;

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) {
    console.error(
      `[spotcheck] ${signal} again: exiting without a clean close (the next start replays the journal)`,
    );
    process.exit(1);
  }
  stopping = true;
  console.log(`[spotcheck] ${signal}: closing`);
  setTimeout(() => {
    console.error(
      `[spotcheck] close did not finish in ${CLOSE_DEADLINE_MS / 1000} s: exiting without it (the next start replays the journal)`,
    );
    process.exit(1);
  }, CLOSE_DEADLINE_MS).unref();
  server.close();
  server.closeIdleConnections();
  await service.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
