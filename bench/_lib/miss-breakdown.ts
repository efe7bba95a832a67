/**
 * Where a cache miss spends its time, measured in this process with the service's own parts (diagnostic: the
 * service process cannot be timed from inside without changing it). Per round, in the order a miss meets them:
 * the probe (`io/probe/prober.ts` against the seller), the index read a miss makes (`store.observations` of a URL not
 * seen before: it first flushes the receipts and observations queued by the previous checks into DuckDB, then
 * selects), the same read with nothing queued, the durable journal append (fdatasync), and the reputation lookup
 * exempt and paid answers carry (`core/reputation.ts` over the store: three queries by host, each after a flush).
 * Every round adds a receipt and an observation of the same host, as the real misses do.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createReputationLookup } from '../../api/reputation-lookup.ts';
import { parseCidrList } from '../../core/ssrf.ts';
import { createProber } from '../../io/probe/prober.ts';
import { createJournal } from '../../io/receipts/journal.ts';
import { openDuckDbStore } from '../../io/store/duckdb.ts';
import { tempDataDir } from './processes.ts';
import { type Summary, summarize } from './stats.ts';

/** Latency of each stage of a miss (ms). */
export type MissBreakdown = {
  probe: Summary;
  readAfterWrites: Summary;
  readAlone: Summary;
  journal: Summary;
  reputation: Summary;
};

/** Runs `rounds` rounds against `seller` with `receipt` (a real signed receipt) as the indexed body. */
export async function missBreakdown(
  seller: string,
  receipt: Record<string, unknown>,
  rounds: number,
): Promise<MissBreakdown> {
  const data = await tempDataDir('breakdown');
  const store = await openDuckDbStore(join(data.dir, 'index.duckdb'));
  const journal = await createJournal({ dir: join(data.dir, 'journal'), fsync: true });
  const prober = createProber({ allow: parseCidrList('127.0.0.0/8') });
  const reputation = createReputationLookup({ source: store, now: () => new Date() });
  const t = {
    probe: [] as number[],
    readAfterWrites: [] as number[],
    readAlone: [] as number[],
    journal: [] as number[],
    reputation: [] as number[],
  };
  try {
    for (let i = 0; i < rounds; i++) {
      let started = performance.now();
      const outcome = await prober.probe(`${seller}?breakdown=${i}`, 'GET');
      t.probe.push(performance.now() - started);
      if (outcome.kind !== 'response' || outcome.response.status !== 402)
        throw new Error('bench: breakdown probe did not get a 402');
      // What the previous miss left queued: its receipt row and its observation.
      const id = `${String(receipt.id)}-${i}`;
      const urlNorm = `${seller}?breakdown=${i}`;
      store.indexReceipts([
        {
          id,
          type: 'check',
          issuedAt: new Date().toISOString(),
          url: urlNorm,
          urlNorm,
          method: 'GET',
          verdict: 'pay',
          reason: 'price_ok',
          checkType: 'dry-run',
          mode: 'live',
          tier: 'exempt',
          body: { ...receipt, id },
        },
      ]);
      store.addObservation(urlNorm, 'GET', {
        observed_at: outcome.probedAt,
        http_status: 402,
        price_usd: 0.01,
        amount_atomic: '10000',
        network: 'eip155:8453',
        asset: null,
        pay_to: null,
      });
      started = performance.now();
      await store.observations(`${urlNorm}&next`, 'GET');
      t.readAfterWrites.push(performance.now() - started);
      started = performance.now();
      await store.observations(`${urlNorm}&again`, 'GET');
      t.readAlone.push(performance.now() - started);
      started = performance.now();
      await journal.append({ v: 1, kind: 'receipt', receipt: { ...receipt, id } });
      t.journal.push(performance.now() - started);
      started = performance.now();
      if ((await reputation({ url: urlNorm })) === null) throw new Error('bench: reputation lookup failed');
      t.reputation.push(performance.now() - started);
    }
  } finally {
    await journal.close();
    await store.close();
    await data.remove();
  }
  return {
    probe: summarize(t.probe),
    readAfterWrites: summarize(t.readAfterWrites),
    readAlone: summarize(t.readAlone),
    journal: summarize(t.journal),
    reputation: summarize(t.reputation),
  };
}
