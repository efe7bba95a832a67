/**
 * Paid-call records for tests of the catalog, the store's recent calls and the lookup: a passing call of `fx-rate` to
 * `https://<host>/run` at `at`, priced 0.01 USDC on Base, with its settlement transaction numbered by `n`.
 */
import { paidCallRecord } from '../../core/catalog.ts';
import { BASE } from '../../core/networks.ts';

/** One call; `extra` overrides any member. */
export function paidCallAt(
  host: string,
  at: Date,
  n: number,
  extra: Partial<Parameters<typeof paidCallRecord>[0]> = {},
) {
  return paidCallRecord({
    endpoint_url: `https://${host}/run`,
    task: 'fx-rate',
    called_at: at.toISOString(),
    price_atomic: '10000',
    network: BASE,
    pay_to: '0x1111111111111111111111111111111111111111',
    settlement_tx: `0x${String(n).padStart(64, '0')}`,
    delivered: true,
    known_answer: 'pass',
    http_status: 200,
    ...extra,
  });
}
