/**
 * What the hosted-mode routes answer (docs/api.md §4 `GET /v1/integrators/me`, shape "not shown",
 * filled in docs/decisions.md "Hosted mode"): the integrator's account, an invoice and the answer of paying one. As
 * in `answer-schemas.ts`, objects are loose and these schemas are what `/openapi.json` publishes and the tests hold
 * live answers to.
 */
import * as v from 'valibot';
import { AccessSchema } from './answer-schemas.ts';
import { WatchAnswerSchema } from './watch-schemas.ts';

const text = v.string();
const nullableText = v.nullable(v.string());
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
/** An amount as atomic USDC units and its USD text. */
const Amount = v.looseObject({ atomic: text, usd: text });
/** `settling` while one payment of it is being settled (the others get a 409). */
const InvoiceStatus = v.picklist(['open', 'settling', 'paid', 'nothing_due']);
/** A settlement that landed on an invoice already paid: recorded, for the operator to return. */
const OverpaymentSchema = v.looseObject({ tx: text, payer: text, amount: Amount, at: text });

/** The calls of one month per band, what they cost, and the end users counted by hash. */
const MonthSchema = v.looseObject({
  month: text,
  calls: count,
  bands: v.looseObject({ free_allowance: count, standard: count, volume: count }),
  amount_due: Amount,
  end_users: count,
});

/** `GET /v1/integrators/me`. */
export const IntegratorAccountSchema = v.looseObject({
  integrator: v.looseObject({ id: text, name: text, created_at: text }),
  current_month: v.looseObject({ ...MonthSchema.entries, credit_limit: Amount, credit_left: Amount }),
  keys: v.array(
    v.looseObject({
      id: text,
      label: text,
      state: v.picklist(['active', 'suspended', 'revoked']),
      created_at: text,
    }),
  ),
  previous_months: v.array(
    v.looseObject({
      ...MonthSchema.entries,
      invoice: v.nullable(
        v.looseObject({
          id: text,
          status: InvoiceStatus,
          total: Amount,
          tx: nullableText,
          paid_at: nullableText,
          url: text,
          pdf_url: text,
          pay_url: v.pipe(text, v.description('The pay link to hand a payer: it carries the random token.')),
          overpayments: v.array(OverpaymentSchema),
        }),
      ),
    }),
  ),
  watches: v.pipe(
    v.array(WatchAnswerSchema),
    v.description('The watches made with your keys, newest first (never their tokens).'),
  ),
});

/**
 * The payment of an invoice: `open`, `settling`, `paid` with the settlement transaction, or `nothing_due`; the pay
 * link (with its token) to hand a payer; settlements that landed after it was paid.
 */
const InvoicePaymentSchema = v.looseObject({
  status: InvoiceStatus,
  tx: nullableText,
  paid_at: nullableText,
  pay_url: text,
  overpayments: v.array(OverpaymentSchema),
});

/** `GET /v1/invoices/{id}`: the signed invoice (its own receipt) and its payment. */
export const InvoiceAnswerSchema = v.looseObject({
  invoice: v.looseObject({
    id: text,
    type: v.literal('invoice'),
    month: text,
    integrator: v.looseObject({ id: text, name: text }),
    lines: v.array(
      v.looseObject({ band: text, quantity: count, unit_price_atomic: text, amount_atomic: text }),
    ),
    total: Amount,
    currency: v.literal('USDC'),
    network: text,
    asset: text,
    pay_to: text,
    pay_url: text,
    kid: text,
    signature: text,
  }),
  payment: InvoicePaymentSchema,
});

/**
 * `GET`/`POST /v1/invoices/{id}/pay`, once the settlement landed: `paid` by it, or `overpaid` when another settlement
 * had paid the invoice first (this one is recorded as an overpayment, and `message` says so).
 */
export const InvoicePaidSchema = v.looseObject({
  invoice_id: text,
  payment: v.looseObject({ status: v.picklist(['paid', 'overpaid']), tx: text, paid_at: text }),
  message: v.optional(text),
  access: AccessSchema,
});
