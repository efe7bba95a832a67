/**
 * Target: "invoices for a month of 1,000,000 hosted checks over 100 integrators: <= 30 s".
 *
 * Method: a fresh journal receives BENCH_INVOICE_CHECKS hosted-use records (default 1,000,000) of last month spread
 * over 100 integrators (untimed set-up, fsync off), then `issueInvoices` runs as `npm run invoices` runs it without a
 * server: it folds the journal into the usage snapshot, then signs and writes a JSON invoice and a PDF per
 * integrator. That call is timed; the totals are checked against the band rule.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { amountDue } from '../core/hosted.ts';
import { openIntegratorStore } from '../io/integrators/duckdb.ts';
import { issueInvoices } from '../io/integrators/invoices.ts';
import { loadSigningKeys } from '../io/keys.ts';
import { createJournal, readJournal } from '../io/receipts/journal.ts';
import { removeLater } from './_lib/processes.ts';
import { type Figure, intEnv, type Result, round } from './_lib/result.ts';

const TARGET_S = 30;
const INTEGRATORS = 100;

/** Runs the benchmark. */
export async function run(): Promise<Result> {
  const checks = intEnv('BENCH_INVOICE_CHECKS', 1_000_000);
  console.log(`\n== invoices: ${checks} hosted checks over ${INTEGRATORS} integrators ==`);
  const dir = await mkdtemp(join(tmpdir(), 'spotcheck-bench-invoices-'));
  try {
    const journal = await createJournal({ dir: join(dir, 'journal'), fsync: false });
    const month = '2026-01';
    const pending: Array<Promise<unknown>> = [];
    for (let i = 0; i < checks; i++) {
      pending.push(
        journal.append({
          v: 1,
          kind: 'hosted_use',
          month,
          integrator: `int${i % INTEGRATORS}`,
          key: 'k',
          end_user: `eu:${i % 5000}`,
          receipt: null,
        }),
      );
      if (pending.length >= 50_000) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    await journal.close();
    const store = await openIntegratorStore(join(dir, 'integrators.duckdb'));
    const keys = await loadSigningKeys({ dir: join(dir, 'keys') });

    const started = performance.now();
    const issued = await issueInvoices({
      store,
      tail: (visit, options) => readJournal(join(dir, 'journal'), visit, options),
      month,
      now: new Date('2026-02-02T00:00:00Z'),
      signer: keys.signer,
      dir: join(dir, 'invoices'),
      payTo: '0x1111111111111111111111111111111111111111',
      baseUrl: 'https://spotcheck.example',
      random: (n) => crypto.getRandomValues(new Uint8Array(n)),
    });
    const seconds = (performance.now() - started) / 1000;
    await store.close();

    const perIntegrator = Math.floor(checks / INTEGRATORS);
    const expected = amountDue(perIntegrator).toString();
    const exact = issued.length === INTEGRATORS && issued.every((item) => item.total_atomic === expected);
    console.log(
      `${issued.length} invoices in ${seconds.toFixed(2)} s (target <= ${TARGET_S} s: ${seconds <= TARGET_S ? 'PASS' : 'MISS'}); totals ${exact ? 'exact' : 'WRONG'}`,
    );
    if (!exact) throw new Error('bench: invoice totals do not follow the bands');
    const figures: Figure[] = [
      { name: 'invoice run', value: round(seconds, 2), unit: 's', target: { max: TARGET_S } },
      { name: 'hosted checks folded', value: checks, unit: '' },
    ];
    return {
      bench: 'invoices',
      figures,
      notes: [
        `${checks} journaled hosted uses of one month, ${INTEGRATORS} integrators; fold + sign + JSON + PDF timed`,
      ],
    };
  } finally {
    removeLater(dir);
  }
}
