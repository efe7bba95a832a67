/**
 * `GET /v1/integrators/me` (docs/api.md §4): an integrator's account, read with any of its active keys:
 * the month so far (calls per band, amount due, credit limit and what is left, end users counted by hash), its keys
 * and their states, and previous months with their invoices. The spec leaves the shape open ("not shown"); this one
 * is documented in docs/decisions.md.
 */
import type { H3 } from 'h3';
import { atomicToUsdText } from '../../core/amount.ts';
import { amountDue, bandCounts, utcMonth } from '../../core/hosted.ts';
import type { InvoiceRow } from '../../io/integrators/port.ts';
import type { AppDeps } from '../deps.ts';
import { type Hosted, type HostedCaller, requireHostedCaller } from '../hosted.ts';
import { settleLeftClaim } from '../invoice-claims.ts';
import { claimDeps, paymentOf } from './invoices.ts';
import { watchView } from './watches.ts';

/** Registers the integrator routes. */
export function integratorRoutes(app: H3, deps: AppDeps): void {
  app.get('/v1/integrators/me', async (event) => {
    const { hosted, caller } = requireHostedCaller(event, deps.hosted);
    event.res.headers.set('cache-control', 'no-store');
    const settle = (row: InvoiceRow) => settleLeftClaim(row, claimDeps(hosted, deps));
    const answer = await account(hosted, caller, utcMonth(deps.now()), deps.baseUrl, deps.now, settle);
    return { ...answer, watches: await watchesOf(deps, caller) };
  });
}

/** The watches the integrator made with its keys (docs/api.md "Watches"), newest first; none without a watch store. */
async function watchesOf(deps: AppDeps, caller: HostedCaller) {
  const rows = (await deps.watches?.store.watchesOfIntegrator(caller.integrator.id)) ?? [];
  return rows.map((row) => watchView(deps, row));
}

const usd = (atomic: bigint) => ({ atomic: atomic.toString(), usd: atomicToUsdText(atomic.toString()) });

async function account(
  hosted: Hosted,
  caller: HostedCaller,
  month: string,
  baseUrl: string,
  now: () => Date,
  settle: (row: InvoiceRow) => Promise<InvoiceRow>,
) {
  const { integrator } = caller;
  const monthOf = async (which: string) => {
    const calls = await hosted.meter.calls(integrator.id, which);
    return {
      month: which,
      calls,
      bands: bandCounts(calls),
      amount_due: usd(amountDue(calls)),
      end_users: await hosted.meter.endUsers(integrator.id, which),
    };
  };
  const current = await monthOf(month);
  const due = amountDue(current.calls);
  const left = integrator.creditLimitAtomic > due ? integrator.creditLimitAtomic - due : 0n;
  const rows = await Promise.all((await hosted.store.invoices(integrator.id)).map(settle));
  const invoices = new Map(rows.map((row) => [row.month, row]));
  const overpayments = await hosted.store.overpayments({ integrator: integrator.id });
  const keys = (await hosted.store.keys()).filter((key) => key.integrator === integrator.id);
  return {
    integrator: { id: integrator.id, name: integrator.name, created_at: integrator.createdAt },
    current_month: { ...current, credit_limit: usd(integrator.creditLimitAtomic), credit_left: usd(left) },
    keys: keys.map((key) => ({ id: key.id, label: key.label, state: key.state, created_at: key.createdAt })),
    previous_months: await Promise.all(
      (await hosted.meter.months(integrator.id))
        .filter((which) => which < month)
        .reverse()
        .map(async (which) => {
          const invoice = invoices.get(which);
          const payment = invoice
            ? paymentOf(
                invoice,
                { baseUrl, now },
                overpayments.filter((row) => row.invoice === invoice.id),
              )
            : null;
          return {
            ...(await monthOf(which)),
            invoice:
              invoice && payment
                ? {
                    id: invoice.id,
                    status: payment.status,
                    total: usd(BigInt(invoice.totalAtomic)),
                    tx: invoice.tx,
                    paid_at: invoice.paidAt,
                    url: `${baseUrl}/v1/invoices/${invoice.id}`,
                    pdf_url: `${baseUrl}/v1/invoices/${invoice.id}.pdf`,
                    pay_url: payment.pay_url,
                    overpayments: payment.overpayments,
                  }
                : null,
          };
        }),
    ),
  };
}
