/**
 * The prebuilt badge files of every host in the run (`/badge/{host}.svg`, `.png`, `.json`), drawn as of the
 * build by the same renderer the live server uses (`io/documents/badge-image.ts`). A static host serves these; the
 * server draws badges fresh, so they turn grey on time between builds.
 */
import { shieldsEndpoint } from '../../core/badge.ts';
import { type BadgeRenderer, createBadgeRenderer } from '../../io/documents/badge-image.ts';
import { type HostBadge, hostBadges } from './collections.ts';

let renderer: Promise<BadgeRenderer> | null = null;

/** `getStaticPaths` of the badge endpoints: one path per host. */
export async function badgePaths() {
  return (await hostBadges()).map((host) => ({ params: { host: host.host }, props: { host } }));
}

/** The badge file of one host, as a static Response. */
export async function badgeFile(host: HostBadge, kind: 'svg' | 'png' | 'json'): Promise<Response> {
  if (kind === 'json') return Response.json(shieldsEndpoint(host.badge));
  renderer ??= createBadgeRenderer();
  const badges = await renderer;
  if (kind === 'svg') return new Response(await badges.svg(host.badge));
  return new Response(new Uint8Array(await badges.png(host.badge)));
}
