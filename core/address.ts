/**
 * Addresses a payment can be signed to: the exact textual forms a wallet accepts for a network,
 * so that nothing but a signable payee or asset can be approved, and no invisible or bidirectional-control
 * character can ride along into a receipt.
 */
import { checksum } from 'ox/Address';

const EVM = /^0x[0-9a-fA-F]{40}$/;
/** Base58 (no 0, O, I, l) public key: 32 bytes are 32 to 44 characters. */
const SOLANA = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * True for `0x` and 40 hex digits whose letters are all lower case, all upper case, or EIP-55 checksummed. A
 * mixed-case address with a wrong checksum is refused: viem (and so the official x402 client) cannot sign to it.
 *
 * @example isEvmAddress('0x52908400098527886E0F7030069857D2E4169EE7') // true
 */
export function isEvmAddress(text: string): boolean {
  if (typeof text !== 'string' || !EVM.test(text)) return false;
  const hex = text.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  return checksum(text) === text;
}

/**
 * Whether `address` is a valid address on `network` (CAIP-2): EVM (`eip155:*`) per {@link isEvmAddress}, Solana
 * (`solana:*`) base58; null for a namespace whose address form Spotcheck does not know (never a supported one).
 *
 * @example isAddressOn('eip155:8453', 'the seller') // false
 */
export function isAddressOn(network: string, address: string): boolean | null {
  if (network.startsWith('eip155:')) return isEvmAddress(address);
  if (network.startsWith('solana:')) return typeof address === 'string' && SOLANA.test(address);
  return null;
}
