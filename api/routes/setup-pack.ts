/**
 * `GET` and `POST /v1/products/overnight-cos-pack` (docs/api.md §1.5, §2.9, §4): the setup pack, always paid, USD 9.
 * POST exists for discovery probes and answers exactly like GET. An unpaid request gets the seller's 402 (price and
 * bazaar metadata from `api/x402/offers.ts`); a paid one gets the pack with `access` (tier, charged_usd, tx).
 *
 * Answer shape (docs/api.md §2.9 leaves the inside open): `product`, `title`, `edition`, `price_usdc` as a decimal string
 * with two decimals (`"9.00"`: exact, and read as money, never a float), `price_atomic` (`"9000000"`), and `files`:
 * `prompts` and `templates` (arrays) and `guide` (one file), each file `{ name, media_type, bytes, sha256,
 * content_base64 }`.
 */
import type { H3, H3Event } from 'h3';
import { atomicToUsdText } from '../../core/amount.ts';
import { loadSetupPack, type SetupPack } from '../../io/documents/setup-pack.ts';
import { answerMetered } from '../access-meter.ts';
import { ACCESS_POLICIES } from '../access-policies.ts';
import type { AppDeps } from '../deps.ts';
import { offerFor } from '../x402/offers.ts';

const PATH = '/v1/products/overnight-cos-pack';

/**
 * Registers the pack's routes. The pack is built once, starting now (start-up), and shared by every answer;
 * pass `pack` to supply it (tests). A pack that fails to build answers 500 to paid calls, and nothing is settled.
 */
export function setupPackRoutes(
  app: H3,
  deps: Pick<AppDeps, 'sales' | 'baseUrl'>,
  pack: Promise<SetupPack> = sharedPack(deps.baseUrl),
): void {
  // Observed here so a broken pack is reported at start-up instead of crashing the process as unhandled.
  pack.catch((error: unknown) => console.error('[spotcheck] setup pack could not be built:', error));
  const priceAtomic = offerFor('setup-pack', deps.baseUrl).priceAtomic;
  // Always paid, whoever asks (`ACCESS_POLICIES.setupPack`); the pack takes no input.
  const handle = (event: H3Event) =>
    answerMetered(event, deps, ACCESS_POLICIES.setupPack, {
      input: () => ({ ok: true, value: null }),
      sell: async () => {
        const ready = await pack;
        return {
          status: 200,
          body: {
            product: ready.product,
            title: ready.title,
            edition: ready.edition,
            price_usdc: usdPriceText(priceAtomic),
            price_atomic: priceAtomic,
            files: ready.files,
          },
        };
      },
    });
  app.get(PATH, handle);
  app.post(PATH, handle);
}

// One build per base URL per process: apps created again (tests, restarts in-process) reuse it.
const built = new Map<string, Promise<SetupPack>>();

function sharedPack(baseUrl: string): Promise<SetupPack> {
  let pack = built.get(baseUrl);
  if (!pack) {
    pack = loadSetupPack({ baseUrl });
    built.set(baseUrl, pack);
  }
  return pack;
}

/** `'9000000'` → `'9.00'`: at least two decimals, more only when the amount has them. */
export function usdPriceText(atomic: string): string {
  const [whole, fraction = ''] = atomicToUsdText(atomic).split('.');
  return `${whole}.${fraction.padEnd(2, '0')}`;
}
