/**
 * `npm run invoices -- --month YYYY-MM`: issues the hosted invoices of a closed month (idempotent: a second run
 * keeps the invoices of the first). Files land in `DATA_DIR/invoices/<month>/`.
 */
import { parseArgs } from 'node:util';
import { parseOp } from '../io/integrator-ops.ts';
import { fail, runOperatorOp } from './operator.ts';

const { values } = parseArgs({ options: { month: { type: 'string' } } });
try {
  await runOperatorOp(parseOp({ op: 'invoices', month: values.month }));
} catch (error) {
  fail(`${(error as Error).message}\nusage: npm run invoices -- --month YYYY-MM`);
}
