/**
 * `npm run keys:rotate`: replaces the receipt signing key. The retired public key stays in the JWKS, so every
 * receipt already issued keeps verifying; a running server signs with the new key after its next restart.
 */

import { dataPaths } from '../io/data-paths.ts';
import { rotateSigningKey } from '../io/keys.ts';
import { readConfig } from './config.ts';

const config = readConfig(process.env);
if (config.signingKeyFile) {
  console.error(
    'keys:rotate: SIGNING_KEY_FILE is set; rotate that key where it is managed, then restart the server.',
  );
  process.exit(2);
}
const { previousKid, kid } = await rotateSigningKey(dataPaths(config.dataDir).keys);
console.log(`signing key rotated: ${previousKid ?? '(none)'} -> ${kid}; restart the server to sign with it`);
