/**
 * `npm run integrators -- <command>`: the operator's hosted-mode accounts (docs/api.md §5.4).
 *
 *   create --name <name> --credit-limit <USD> [--id <id>]   an integrator with a monthly credit limit
 *   keys:issue <integrator> [--label <label>]                a new key, printed once (only its hash is kept)
 *   list                                                     integrators and their keys' states
 *   suspend | resume | revoke <key id | integrator id>       a key, or every key of an integrator
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { usdToAtomic } from '../core/amount.ts';
import { formatServiceKey, hashSecret, newServiceKey } from '../core/service-key.ts';
import { parseOp } from '../io/integrators/ops.ts';
import { exitWithError, runOperatorOp } from './operator.ts';

const USAGE = `usage: npm run integrators -- create --name <name> --credit-limit <USD> [--id <id>]
       npm run integrators -- keys:issue <integrator> [--label <label>]
       npm run integrators -- list
       npm run integrators -- suspend|resume|revoke <key id | integrator id>
(DATA_DIR selects the service, default ./data/runtime)`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    'credit-limit': { type: 'string' },
    id: { type: 'string' },
    label: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const [command, target] = positionals;
const at = new Date().toISOString();
const random = (n: number) => new Uint8Array(randomBytes(n));
const STATES = { suspend: 'suspended', resume: 'active', revoke: 'revoked' } as const;

if (values.help || command === undefined) exitWithError(USAGE);
try {
  if (command === 'create') {
    const limit = usdToAtomic(values['credit-limit'] ?? '');
    if (!values.name || limit === null)
      exitWithError(`create needs --name and --credit-limit in USD\n${USAGE}`);
    const id = values.id ?? newServiceKey(random).id;
    await runOperatorOp(parseOp({ op: 'create', id, name: values.name, credit_limit_atomic: limit, at }));
  } else if (command === 'keys:issue') {
    const key = newServiceKey(random);
    const op = parseOp({
      op: 'issue',
      integrator: target,
      key_id: key.id,
      secret_hash: hashSecret(key.secret),
      label: values.label ?? 'default',
      at,
    });
    await runOperatorOp(op);
    if (process.exitCode === undefined || process.exitCode === 0)
      console.log(`key (shown once, store it now): ${formatServiceKey(key)}`);
  } else if (command === 'list') {
    await runOperatorOp(parseOp({ op: 'list' }));
  } else if (command in STATES) {
    const state = STATES[command as keyof typeof STATES];
    await runOperatorOp(parseOp({ op: 'state', target, state, at }));
  } else exitWithError(USAGE);
} catch (error) {
  exitWithError((error as Error).message);
}
