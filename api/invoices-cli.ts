/**
 * `npm run invoices -- --month YYYY-MM`: issues the hosted invoices of a closed month (idempotent: a second run
 * keeps the invoices of the first). Files land in `DATA_DIR/invoices/<month>/`.
 * `npm run invoices -- --overpayments`: the settlements that landed on invoices already paid, to return.
 */
import { parseArgs } from 'node:util';
import { parseOp } from '../io/integrators/ops.ts';
import { exitWithError, runOperatorOp } from './operator.ts';

const USAGE = 'usage: npm run invoices -- --month YYYY-MM\n       npm run invoices -- --overpayments';
try {
  const { values } = parseArgs({ options: { month: { type: 'string' }, overpayments: { type: 'boolean' } } });
  await runOperatorOp(
    parseOp(values.overpayments ? { op: 'overpayments' } : { op: 'invoices', month: values.month }),
  );
} catch (error) {
  exitWithError(`${(error as Error).message}\n${USAGE}`);
}
