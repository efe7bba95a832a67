import { HTTPError } from 'h3';
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from '../../../api/errors.ts';
import { boundedPort, DatabaseUnavailable, waitFor } from '../../../io/postgres/wait.ts';

const never = () => new Promise<never>(() => {});
/** A postgres.js error as the driver builds it: a plain Error with a `code`. */
const driverError = (code: string) => Object.assign(new Error(`write ${code} 127.0.0.1:5432`), { code });
/** A server error as postgres.js builds it: a `PostgresError` carrying the SQLSTATE. */
const serverError = (code: string) => {
  const error = Object.assign(new Error('server said no'), { code });
  Object.defineProperty(error, 'name', { value: 'PostgresError' });
  return error;
};

describe('waitFor', () => {
  it('gives the answer of a call that answers in time', async () => {
    await expect(waitFor(Promise.resolve(7), 50)).resolves.toBe(7);
  });

  it('rejects with DatabaseUnavailable once the deadline passed, not before', async () => {
    const started = performance.now();
    const outcome = await waitFor(never(), 40).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(DatabaseUnavailable);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
  });

  it.each(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT', 'ECONNREFUSED'])(
    'reads the driver code %s as the database unavailable, keeping the error as its cause',
    async (code) => {
      const cause = driverError(code);
      const outcome = await waitFor(Promise.reject(cause), 50).catch((error: unknown) => error);
      expect(outcome).toBeInstanceOf(DatabaseUnavailable);
      expect((outcome as Error).cause).toBe(cause);
    },
  );

  it.each(['57P01', '57P03', '08006', '53300'])(
    'reads the server state %s (shutdown, starting, connection failure, too many connections) as unavailable',
    async (code) => {
      const outcome = await waitFor(Promise.reject(serverError(code)), 50).catch((error: unknown) => error);
      expect(outcome).toBeInstanceOf(DatabaseUnavailable);
    },
  );

  it('reads a failure caused by a lost connection (a receipt refused for want of one) as unavailable', async () => {
    const refused = new Error('receipt r1 is not committed in PostgreSQL', {
      cause: driverError('ECONNREFUSED'),
    });
    await expect(waitFor(Promise.reject(refused), 50)).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it('passes any other failure through as it is: a constraint, a refusal, an error without a code', async () => {
    for (const error of [serverError('23505'), driverError('UNDEFINED_VALUE'), new Error('credit limit')]) {
      await expect(waitFor(Promise.reject(error), 50)).rejects.toBe(error);
    }
  });

  it('leaves no timer behind an answer: the process may exit at once', async () => {
    const before = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    await waitFor(Promise.resolve(1), 60_000);
    const after = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    expect(after).toBe(before);
  });
});

describe('boundedPort', () => {
  const port = {
    calls: 0,
    hang(): Promise<number> {
      this.calls++;
      return never();
    },
    async count(): Promise<number> {
      this.calls++;
      return this.calls;
    },
    name: () => 'port',
  };

  it('bounds the methods named, calls them on the port itself, and leaves the others as they are', async () => {
    const bounded = boundedPort(port, ['hang', 'count'], 30);
    await expect(bounded.hang()).rejects.toBeInstanceOf(DatabaseUnavailable);
    await expect(bounded.count()).resolves.toBe(2);
    expect(bounded.name).toBe(port.name);
    expect(port.calls).toBe(2);
  });

  it('refuses a name that is not a method', () => {
    expect(() => boundedPort(port, ['calls'])).toThrow(TypeError);
  });
});

describe('the answer to a database that did not answer', () => {
  it('is a 503 database_unavailable with Retry-After, wherever the error sits in the chain of causes', async () => {
    const late = new DatabaseUnavailable('PostgreSQL did not answer within 10000 ms');
    // h3 wraps what a handler throws as `new HTTPError(thrown)`.
    for (const error of [
      new HTTPError(late),
      new HTTPError({ cause: late }),
      new HTTPError({ cause: new Error('receipt not committed', { cause: late }) }),
    ]) {
      const response = toErrorResponse(error);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('database_unavailable');
      expect(body.error.message).not.toContain('10000');
    }
  });

  it('leaves other errors to the 500 they were', () => {
    expect(toErrorResponse(new HTTPError({ cause: new Error('boom') })).status).toBe(500);
  });
});
