/**
 * The durable-signed floor: the least a signed, durable answer can cost on this machine. A bare h3
 * app with one route, `GET /floor`, that for every request takes a receipt-sized object (a real check receipt
 * handed over in `FLOOR_RECEIPT`, given a fresh id and time), canonicalizes it with `canonicalize` (RFC 8785), signs
 * the bytes with Ed25519 through node:crypto, appends the signed receipt as one line to the service's own journal
 * (`io/receipts/journal.ts`: group commit, fdatasync on) and answers the receipt only once its line is durable.
 *
 * Served on node:http exactly as `bare-server.ts` and `api/service.ts` serve theirs. HOST/PORT and
 * `FLOOR_DATA_DIR` (where the journal goes) come from the environment; stops on SIGTERM.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { H3 } from 'h3';
import { createJournal } from '../../io/receipts/journal.ts';
import { serveUntilTerm } from './serve.ts';

const template = JSON.parse(process.env.FLOOR_RECEIPT ?? '{}') as Record<string, unknown>;
const dataDir = process.env.FLOOR_DATA_DIR;
if (!dataDir || typeof template.id !== 'string') throw new Error('floor: FLOOR_DATA_DIR and FLOOR_RECEIPT');
const { privateKey } = generateKeyPairSync('ed25519');
const journal = await createJournal({ dir: join(dataDir, 'journal') });

const app = new H3().get('/floor', async () => {
  const unsigned = {
    ...template,
    id: `sc-${randomBytes(16).toString('base64url').toLowerCase().slice(0, 26)}`,
    issued_at: new Date().toISOString(),
    kid: 'floor',
  };
  const text = canonicalize(unsigned) as string;
  const signature = sign(null, Buffer.from(text), privateKey).toString('base64url');
  const signed = `${text.slice(0, -1)},"signature":"${signature}"}`;
  await journal.appendJson(signed);
  return new Response(signed, { headers: { 'content-type': 'application/json' } });
});
serveUntilTerm(app, () => journal.close());
