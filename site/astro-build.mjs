// The Astro half of `npm run build:site`, in its own process (site/build.ts starts it with the build's scratch folder
// as working directory and SPOTCHECK_SITE_* set): its memory is given back when it exits, before the receipt pages
// are written, and no loader of the parent (tsx) slows its module loading.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'astro';

const root = process.env.SPOTCHECK_SITE_ROOT;
if (!root) throw new Error('SPOTCHECK_SITE_ROOT is not set: build the site with npm run build:site');
await build({
  root,
  // Astro joins the config path to the root.
  configFile: relative(root, fileURLToPath(new URL('../astro.config.mjs', import.meta.url))),
  logLevel: process.env.SITE_BUILD_VERBOSE ? 'info' : 'warn',
});
// For bench/site.ts: this process's peak resident memory (the parent reports its own).
if (process.env.SITE_BUILD_REPORT)
  console.log(`[spotcheck] astro process peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
