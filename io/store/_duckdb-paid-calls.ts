/**
 * The DuckDB store's paid calls: the `paid_calls` table keeps every call, and the last ones of each service are held
 * in memory (`io/store/recent-paid-calls.ts`), so a lookup within what is kept reads no table.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { select } from '../duckdb/query.ts';
import { toPaidCall } from './_rows.ts';
import { hostOf, type Store } from './port.ts';
import { createRecentPaidCalls, RECENT_KEPT, type RecentPaidCalls } from './recent-paid-calls.ts';

const PAID_CALL_COLUMNS =
  'service_id, endpoint_url, host, task, called_at, price_atomic, network, pay_to, settlement_tx, delivered, ' +
  'known_answer, http_status, broken_on_seller_side, receipt_id, why';

/** The paid-call half of the store port, as the DuckDB store answers it. */
export type DuckDbPaidCalls = Pick<Store, 'addPaidCall' | 'paidCalls'>;

/** Loads the recent calls of every service from `db`; writes and the queries past them go to `db` directly. */
export async function openPaidCalls(db: DuckDBConnection): Promise<DuckDbPaidCalls> {
  const recentCalls = await loadRecentPaidCalls(db);
  return {
    async addPaidCall(r) {
      // Idempotent by receipt: a run taken in again (after a restart) replaces its rows, never doubles them.
      if (r.receipt_id !== null) await db.run('DELETE FROM paid_calls WHERE receipt_id = ?', [r.receipt_id]);
      await db.run(
        `INSERT INTO paid_calls (${PAID_CALL_COLUMNS}) VALUES (${Array(15).fill('?').join(',')})`,
        [
          r.service_id,
          r.endpoint_url,
          hostOf(r.endpoint_url),
          r.task,
          r.called_at,
          r.price_atomic,
          r.network,
          r.pay_to,
          r.settlement_tx,
          r.delivered,
          r.known_answer,
          r.http_status,
          r.broken_on_seller_side,
          r.receipt_id,
          r.why,
        ],
      );
      recentCalls.add(r);
    },
    async paidCalls({ task, endpoint, host, perService }) {
      const recent = recentCalls.query({
        ...(task === undefined ? {} : { task }),
        ...(endpoint === undefined ? {} : { endpoint }),
        ...(host === undefined ? {} : { host }),
        perService,
      });
      if (recent !== null) return recent;
      const where: string[] = [];
      const args: DuckDBValue[] = [];
      if (task !== undefined) {
        where.push('task = ?');
        args.push(task);
      }
      if (endpoint !== undefined) {
        where.push('(service_id = ? OR endpoint_url = ?)');
        args.push(endpoint, endpoint);
      }
      if (host !== undefined) {
        where.push('host = ?');
        args.push(host);
      }
      // newestFirst (core/catalog.ts): time, then settlement transaction, both descending.
      const order = "called_at DESC, coalesce(settlement_tx, '') DESC";
      const rows = await select(
        db,
        `SELECT * EXCLUDE (host) FROM paid_calls ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         QUALIFY row_number() OVER (PARTITION BY service_id ORDER BY ${order}) <= ${Math.max(0, Math.floor(perService))}
         ORDER BY ${order}, service_id`,
        args,
      );
      return rows.map(toPaidCall);
    },
  };
}

/** The last {@link RECENT_KEPT} calls of every service and of every service and task, from the table. */
async function loadRecentPaidCalls(db: DuckDBConnection): Promise<RecentPaidCalls> {
  const recent = createRecentPaidCalls();
  const order = "called_at DESC, coalesce(settlement_tx, '') DESC";
  const rows = await select(
    db,
    `SELECT * EXCLUDE (host) FROM paid_calls
     QUALIFY row_number() OVER (PARTITION BY service_id ORDER BY ${order}) <= ${RECENT_KEPT}
          OR row_number() OVER (PARTITION BY service_id, task ORDER BY ${order}) <= ${RECENT_KEPT}`,
    [],
  );
  for (const row of rows) recent.add(toPaidCall(row));
  return recent;
}
