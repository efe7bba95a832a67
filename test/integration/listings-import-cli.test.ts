/**
 * `npm run listings:import` with `DATABASE_URL`, as an operator of several instances runs it: the listings go to the
 * PostgreSQL every instance reads, and the command says so; when that database cannot be reached the command fails
 * with a non-zero status and no success line (it never falls back to a DuckDB file no instance reads).
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuckDbStore } from '../../io/store/duckdb.ts';
import { buildV2Header, PAY_TO } from '../fixtures/challenge.ts';
import { type DeadPort, startDeadPort } from '../fixtures/dead-port.ts';
import { type RawServer, startHttpServer } from '../fixtures/raw-server.ts';
import { runCli } from '../helpers/cli.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { appFetch, startTestService, type TestService } from '../helpers/service.ts';

const OTHER_WALLET = '0x000000000000000000000000000000000000dEaD';

// Each run starts tsx (seconds on a loaded machine): the suite gets room, not a speed assertion.
describe.skipIf(postgresMissing !== null)(
  'npm run listings:import with DATABASE_URL',
  { timeout: 240_000 },
  () => {
    let pg: TestPostgres;
    let seller: RawServer;
    let dead: DeadPort;
    let cliDir: string;

    beforeAll(async () => {
      pg = await startPostgres();
      seller = await startHttpServer((_req, res) => {
        res.writeHead(402, { 'content-type': 'application/json', 'payment-required': buildV2Header() });
        res.end('{}');
      });
      dead = await startDeadPort();
      cliDir = await mkdtemp(join(tmpdir(), 'spotcheck-listings-cli-'));
    }, 120_000);
    afterAll(async () => {
      await rm(cliDir, { recursive: true, force: true });
      await dead?.close();
      await seller?.close();
      await pg?.stop();
    });

    const listingFile = async (url: string): Promise<string> => {
      const file = join(cliDir, 'listings.json');
      await writeFile(
        file,
        JSON.stringify([
          { url, price_usd: 0.01, network: 'eip155:8453', pay_to: OTHER_WALLET, source: 'ops' },
        ]),
      );
      return file;
    };

    it('writes to PostgreSQL, says so, and a check served by an instance on that database uses the listing', async () => {
      const databaseUrl = await pg.createDatabase();
      const spot: TestService = await startTestService({ DATABASE_URL: databaseUrl }, {}, { listen: false });
      try {
        const url = `${seller.origin}/weather`;
        const check = async (ip: string) => {
          const res = await appFetch(
            spot.service,
            `/v1/products/endpoint-spot-check?url=${encodeURIComponent(url)}`,
            {
              ip,
            },
          );
          expect(res.status).toBe(200);
          return (await res.json()) as { verdict: string; reason_code: string };
        };
        expect(await check('198.51.100.10')).toMatchObject({ verdict: 'pay', reason_code: 'price_ok' });

        // The CLI's DATA_DIR is not the instance's: with DATABASE_URL the database is the state, wherever it runs.
        const run = await runCli('listings-import.ts', [await listingFile(url)], cliDir, {
          DATABASE_URL: databaseUrl,
        });
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(/imported 1 listings into PostgreSQL/);
        expect(run.stdout).not.toMatch(/duckdb/);

        expect(await check('198.51.100.11')).toMatchObject({
          verdict: 'skip',
          reason_code: 'pay_to_mismatch',
        });
        expect(PAY_TO).not.toBe(OTHER_WALLET);
      } finally {
        await spot.stop();
      }
    });

    it('without DATABASE_URL, exits 75 with no success line while a server holds the database and has not taken the file', async () => {
      // This process holds the DuckDB file as a running server does, but never polls the inbox.
      const dataDir = await mkdtemp(join(tmpdir(), 'spotcheck-listings-held-'));
      const store = await openDuckDbStore(join(dataDir, 'spotcheck.duckdb'));
      try {
        // Nothing takes the file, so the command waits its whole wait: 1 s here instead of its 15 s.
        const run = await runCli(
          'listings-import.ts',
          [await listingFile(`${seller.origin}/weather`)],
          dataDir,
          { IMPORT_WAIT_MS: '1000' },
        );
        expect(run.code).toBe(75);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(/not imported yet: a server holds .* it waits in .*inbox/);
        expect((await readdir(join(dataDir, 'inbox'))).filter((name) => name.endsWith('.json'))).toHaveLength(
          1,
        );
      } finally {
        await store.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    });

    it('exits non-zero with no success line when the database cannot be reached', async () => {
      const run = await runCli(
        'listings-import.ts',
        [await listingFile(`${seller.origin}/weather`)],
        cliDir,
        {
          DATABASE_URL: `postgres://postgres@127.0.0.1:${dead.port}/spotcheck`,
        },
      );
      expect(run.code).not.toBe(0);
      expect(run.stdout).not.toMatch(/imported/);
      expect(run.stderr).toMatch(/listings:import: cannot import into PostgreSQL/);
      // Nothing lands in a DuckDB file no instance reads.
      expect(await readdir(cliDir)).not.toContain('spotcheck.duckdb');
    });
  },
);
