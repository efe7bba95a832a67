/**
 * Hosted mode's own routes in `/openapi.json` (docs/api.md §4 `GET /v1/integrators/me`, §5.4): the
 * integrator's account and invoices, read with one of its keys (no free way in), and paying an invoice through x402,
 * with the integrator's key or the pay link's token, for exactly its total (`x-payment-info` says so: the price is
 * the invoice's).
 */
import { IntegratorAccountSchema, InvoiceAnswerSchema, InvoicePaidSchema } from '../core/account-schemas.ts';
import { codes, KEY_401, type Operation, PAID_502 } from './openapi-model.ts';

const KEY_401_REQUIRED = `${codes('missing_key', 'bad_key')}: no key, or ${KEY_401.charAt(0).toLowerCase()}${KEY_401.slice(1)}`;
const INVOICE_ID = {
  name: 'id',
  description: 'The invoice id, inv-<YYYYMM>-<integrator id>.',
  pattern: '^inv-\\d{6}-[a-z0-9]{1,40}$',
};
const NOT_YOURS = `${codes('invoice_not_found')}: no invoice of this integrator has that id.`;

const pay = (method: 'get' | 'post'): Operation => ({
  method,
  path: '/v1/invoices/{id}/pay',
  operationId: `payInvoice${method === 'get' ? 'Get' : 'Post'}`,
  summary: 'Pays an open invoice through x402, for exactly its total.',
  description:
    "Open with the invoice's pay link (its `token`, as `pay_url` gives it) or with a key of the integrator " +
    'invoiced; any other caller gets the 404 of an unknown id, and nothing a caller without the key sees names ' +
    'the integrator or a transaction. The 402 asks for the invoice total in USDC on Base to the service wallet. ' +
    'The invoice is claimed once the facilitator verified the payment and before anything is settled, so a second ' +
    'payer, on any instance, gets a 409 and pays nothing; once settled it is marked paid with the settlement ' +
    'transaction and never sold again. A settlement that lands on an invoice already paid is answered with ' +
    '`payment.status: "overpaid"` and recorded as an overpayment, which its integrator reads on the invoice.',
  pathParameter: INVOICE_ID,
  queryParameters: [
    {
      name: 'token',
      description: "The pay link's random token (32 hex digits); not needed with the integrator's key.",
      pattern: '^[0-9a-f]{32}$',
    },
  ],
  answer: InvoicePaidSchema,
  errors: {
    401: `${codes('bad_key')}: a key was sent and it is not an active integrator key.`,
    404: `${codes('invoice_not_found')}: no invoice at this link (an unknown id, a wrong or missing token, or a key of another integrator: one answer for all).`,
    409: `${codes('invoice_paid')}: already paid (the message names the transaction only to the integrator's key); ${codes('nothing_due')}: the month stayed in the free allowance; ${codes('invoice_payment_in_flight')}: another payment of it is being settled (nothing was charged).`,
    502: PAID_502,
  },
  offer: 'invoice',
});

/** The hosted-mode operations. */
export const HOSTED_OPERATIONS: readonly Operation[] = [
  {
    method: 'get',
    path: '/v1/integrators/me',
    operationId: 'integratorAccount',
    summary:
      "The integrator's month so far (calls per band, amount due, credit limit and what is left, end users), its keys and their states, and previous months with their invoices.",
    answer: IntegratorAccountSchema,
    errors: { 401: KEY_401_REQUIRED },
    keys: 'required',
  },
  {
    method: 'get',
    path: '/v1/invoices/{id}',
    operationId: 'invoice',
    summary: 'A monthly invoice, signed like a receipt (kid, signature), and its payment.',
    pathParameter: INVOICE_ID,
    answer: InvoiceAnswerSchema,
    errors: { 401: KEY_401_REQUIRED, 404: NOT_YOURS },
    keys: 'required',
  },
  {
    method: 'get',
    path: '/v1/invoices/{id}.pdf',
    operationId: 'invoicePdf',
    summary: 'The PDF rendering of the invoice (reproducible bytes).',
    pathParameter: INVOICE_ID,
    media: 'application/pdf',
    errors: { 401: KEY_401_REQUIRED, 404: NOT_YOURS },
    keys: 'required',
  },
  pay('get'),
  pay('post'),
];
