/** The prebuilt `/badge/{host}.svg` (see site/lib/badge-files.ts). */
import type { APIRoute } from 'astro';
import { badgeFile, badgePaths } from '../../lib/badge-files.ts';
import type { HostBadge } from '../../lib/collections.ts';

export const getStaticPaths = badgePaths;
export const GET: APIRoute = ({ props }) => badgeFile((props as { host: HostBadge }).host, 'svg');
