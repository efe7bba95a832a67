/**
 * How long a request waits for PostgreSQL. A database that stops answering (a stopped server, a lost network, a
 * host out of memory) would otherwise hold every request that needs it open for as long as it lasts. So each wait of
 * the service on shared state is bounded: past {@link DATABASE_WAIT_MS} it rejects with {@link DatabaseUnavailable},
 * and so does a wait whose connection failed, which the routes answer as a 503 `database_unavailable` with
 * `Retry-After` (`api/errors.ts`).
 *
 * The query is not cancelled (a frozen server would not read the cancel either) and runs on once the server answers.
 * What it leaves is what a SIGKILL of the instance at that moment would leave (docs/architecture.md "Durability promises" 3): a quota unit or
 * hosted use reserved and not given back stays counted, a receipt committed but never acknowledged is served like
 * any other.
 *
 * The quota, hosted counters and replay guard, which only the service uses, wait through {@link waitFor} inside
 * (a reservation's release too); the store, integrators and tasks, which the operator CLIs share with no deadline,
 * get one where the service opens them (`api/state.ts`, {@link boundedPort}).
 */

/** The longest a request waits on one call to the database (a query, a transaction, a group commit). */
export const DATABASE_WAIT_MS = 10_000;

/** The database did not answer in time, or its connection failed: nothing the caller can fix but waiting. */
export class DatabaseUnavailable extends Error {
  override readonly name = 'DatabaseUnavailable';
}

/**
 * `work`, or a {@link DatabaseUnavailable} rejection after `ms`, or when it fails for want of a working connection.
 * Other failures (a constraint, a refusal of the caller's own) pass through as they are.
 */
export function waitFor<T>(work: PromiseLike<T>, ms: number = DATABASE_WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseUnavailable(`PostgreSQL did not answer within ${ms} ms`)),
      ms,
    );
  });
  const answered = Promise.resolve(work).catch((error: unknown) => {
    throw connectionLost(error)
      ? new DatabaseUnavailable('PostgreSQL connection failed', { cause: error })
      : error;
  });
  return Promise.race([answered, late]).finally(() => clearTimeout(timer));
}

/** `port` with each of `methods` bounded by {@link waitFor}; its other members as they are. */
export function boundedPort<T extends object>(port: T, methods: ReadonlyArray<keyof T>, ms?: number): T {
  const bounded = { ...port };
  for (const name of methods) {
    const method = port[name];
    if (typeof method !== 'function') throw new TypeError(`${String(name)} is not a method`);
    bounded[name] = ((...args: unknown[]) => waitFor(method.apply(port, args), ms)) as T[keyof T];
  }
  return bounded;
}

/**
 * SQLSTATE classes of a server that cannot serve now: 08 connection exception, 53 insufficient resources, 57P
 * operator intervention (shutdown, restart); and postgres.js's own codes for a connection it lost or could not open.
 */
const SERVER_STATES = /^(08|53|57P)/;
const CLIENT_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** True when `error`, or an error it was caused by (a receipt refused for want of a connection), is one of those. */
function connectionLost(error: unknown): boolean {
  let cause = error;
  for (let depth = 0; typeof cause === 'object' && cause !== null && depth < 8; depth++) {
    const { code, name } = cause as { code?: unknown; name?: unknown };
    if (typeof code === 'string') {
      if (CLIENT_CODES.has(code) || (name === 'PostgresError' && SERVER_STATES.test(code))) return true;
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}
