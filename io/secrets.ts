/**
 * Installation secrets generated on first start under `DATA_DIR/keys/` (mode 0600): the salt of the quota
 * identity hash and, when SERVICE_WALLET is not set, a wallet of the operator's own to receive payments, so the
 * embedded defaults never point payments at an address nobody controls.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

/** The salt of the quota identity hash; 32 random bytes, created once. */
export async function loadSalt(keysDir: string): Promise<Uint8Array> {
  const file = join(keysDir, 'quota-salt');
  const existing = await readOptional(file);
  if (existing) return Buffer.from(existing.trim(), 'base64url');
  const salt = randomBytes(32);
  await writeSecret(file, salt.toString('base64url'));
  return salt;
}

/**
 * The wallet the service's 402s ask to be paid to: SERVICE_WALLET when set, else a generated wallet whose private
 * key stays in `service-wallet.key` for the operator.
 */
export async function loadServiceWallet(
  keysDir: string,
  configured: `0x${string}` | null,
): Promise<{ address: `0x${string}`; generated: boolean; keyFile: string | null }> {
  if (configured) return { address: configured, generated: false, keyFile: null };
  const file = join(keysDir, 'service-wallet.key');
  let key = (await readOptional(file))?.trim() as `0x${string}` | undefined;
  if (!key) {
    key = generatePrivateKey();
    await writeSecret(file, key);
  }
  return { address: privateKeyToAccount(key).address, generated: true, keyFile: file };
}

async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Written durably (file and directory fsynced): a lost wallet key would strand payments already asked for. */
async function writeSecret(file: string, text: string): Promise<void> {
  const dir = join(file, '..');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(`${text}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
