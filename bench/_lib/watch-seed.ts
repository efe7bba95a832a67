/**
 * Watches for the watch benches, written straight into the service's watch store before it starts (buying 100,000
 * watches through x402 is not what the benches measure). The schema is the store's own (`openDuckDbWatchStore`
 * creates it), the rows are `watchValues` of real `WatchRow`s, and each endpoint's first due time is the bench's
 * choice (spread over an interval, as watches made over time would be, or due at once). Rows go in through
 * DuckDB's appender in one transaction: 100,000 `createWatch` transactions would take minutes.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parseTargetUrl } from '../../core/url.ts';
import { WATCH_EVENT_TYPES } from '../../core/watch-events.ts';
import { watchValues } from '../../io/watches/_rows.ts';
import { openDuckDbWatchStore } from '../../io/watches/duckdb.ts';
import type { WatchRow } from '../../io/watches/port.ts';

/** One endpoint to watch: its URL, how many watches it has, where they send webhooks, when it is first due. */
export type SeedEndpoint = { url: string; watches: number; webhookUrl: string | null; dueMs: number };

/** Writes the watches of `endpoints` into `dataDir`'s watch store; resolves with the number of watches. */
export async function seedWatches(
  dataDir: string,
  endpoints: SeedEndpoint[],
  nowMs: number,
): Promise<number> {
  const path = join(dataDir, 'watches.duckdb');
  await (await openDuckDbWatchStore(path)).close();
  const instance = await DuckDBInstance.create(path);
  const db = await instance.connect();
  let count = 0;
  try {
    await db.run('BEGIN TRANSACTION');
    const watches = await db.createAppender('watches');
    const schedule = await db.createAppender('watch_endpoints');
    for (const e of endpoints) {
      for (let i = 0; i < e.watches; i++) {
        for (const value of watchValues(rowOf(e, nowMs))) {
          if (value === null) watches.appendNull();
          else if (typeof value === 'boolean') watches.appendBoolean(value);
          else if (typeof value === 'number') watches.appendBigInt(BigInt(value));
          else watches.appendVarchar(value);
        }
        watches.endRow();
        count++;
      }
      schedule.appendVarchar(e.url);
      schedule.appendVarchar('GET');
      schedule.appendBigInt(BigInt(e.dueMs));
      schedule.appendBigInt(0n);
      schedule.appendNull();
      schedule.endRow();
    }
    watches.closeSync();
    schedule.closeSync();
    await db.run('COMMIT');
    await db.run('CHECKPOINT');
  } finally {
    db.closeSync();
    instance.closeSync();
  }
  return count;
}

function rowOf(e: SeedEndpoint, nowMs: number): WatchRow {
  const parsed = parseTargetUrl(e.url);
  if (!parsed.ok) throw new Error(`seedWatches: ${e.url}: ${parsed.message}`);
  return {
    id: `wa-${randomBytes(16).toString('hex')}`,
    tokenHash: randomBytes(32).toString('hex'),
    url: e.url,
    urlNorm: parsed.normalized,
    method: 'GET',
    payTo: null,
    network: null,
    claimedPrice: null,
    webhookUrl: e.webhookUrl,
    events: [...WATCH_EVENT_TYPES],
    owner: { kind: 'exempt', name: 'bench' },
    createdAt: new Date(nowMs).toISOString(),
    expiresAtMs: nowMs + 30 * 86_400_000,
    status: 'active',
    expiringSent: false,
  };
}
