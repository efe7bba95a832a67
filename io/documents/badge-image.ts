/**
 * Draws the status badge (docs/api.md §3.3): one satori component for the SVG, resvg for the PNG. The site build and
 * the live server (`/badge/{host}.svg`) use this same renderer, so the prebuilt and the live badge look alike.
 *
 * Fonts: Inter (latin, from `@fontsource/inter`), with Debian's DejaVu Sans as fallback when it is installed.
 * Rendered images depend only on the colour and the words, so they are cached by those (a few hundred at most).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Resvg } from '@resvg/resvg-js';
import satori from 'satori';
import type { BadgeState } from '../../core/badge.ts';
import { escapeXml } from '../../core/format.ts';

const require = createRequire(import.meta.url);
const INTER = require.resolve('@fontsource/inter/files/inter-latin-400-normal.woff');
const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

/** Colours of the two badge states; the message side carries the state, the label side stays dark. */
export const BADGE_COLORS = { green: '#2e7d32', grey: '#6b7280', label: '#3f3f46' } as const;

const CACHE_LIMIT = 512;

type Font = { name: string; data: Buffer; weight: 400; style: 'normal' };

export type BadgeRenderer = {
  svg(state: BadgeState): Promise<string>;
  png(state: BadgeState): Promise<Buffer>;
};

/**
 * Loads the fonts once and returns a renderer.
 * @example const badges = await createBadgeRenderer(); const svg = await badges.svg(badgeState(null, new Date()))
 */
export async function createBadgeRenderer(): Promise<BadgeRenderer> {
  const fonts: Font[] = [{ name: 'Inter', data: await readFile(INTER), weight: 400, style: 'normal' }];
  const dejavu = await readFile(DEJAVU).catch(() => null);
  if (dejavu !== null) fonts.push({ name: 'DejaVu Sans', data: dejavu, weight: 400, style: 'normal' });
  const svgs = new Map<string, Promise<string>>();
  const pngs = new Map<string, Promise<Buffer>>();

  const svg = (state: BadgeState) =>
    remember(svgs, keyOf(state), async () =>
      labelled(
        await satori(badgeElement(state) as Parameters<typeof satori>[0], { height: 20, fonts }),
        state,
      ),
    );
  const png = (state: BadgeState) =>
    remember(pngs, keyOf(state), async () =>
      // Four times the CSS size: sharp on high-density screens and as a social preview.
      Buffer.from(new Resvg(await svg(state), { fitTo: { mode: 'zoom', value: 4 } }).render().asPng()),
    );
  return { svg, png };
}

/** The badge component: label on the left, the state's words on the right, shields.io proportions. */
export function badgeElement(state: BadgeState) {
  const part = (text: string, background: string) => ({
    type: 'div',
    props: {
      style: { display: 'flex', alignItems: 'center', padding: '0 6px', background },
      children: text,
    },
  });
  return {
    type: 'div',
    props: {
      style: {
        display: 'flex',
        height: 20,
        fontFamily: 'Inter, DejaVu Sans',
        fontSize: 11,
        color: '#ffffff',
        borderRadius: 3,
        overflow: 'hidden',
      },
      children: [part(state.label, BADGE_COLORS.label), part(state.message, BADGE_COLORS[state.color])],
    },
  };
}

/** Gives the SVG a text alternative (satori draws glyphs as paths, so the words are otherwise lost). */
function labelled(svg: string, state: BadgeState): string {
  const words = escapeXml(`${state.label}: ${state.message}`);
  return svg
    .replace(/^<svg /, `<svg role="img" aria-label="${words}" `)
    .replace(/>/, `><title>${words}</title>`);
}

function keyOf(state: BadgeState): string {
  return `${state.color}\u0000${state.label}\u0000${state.message}`;
}

function remember<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  const made = make();
  cache.set(key, made);
  made.catch(() => cache.delete(key));
  return made;
}
