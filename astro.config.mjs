// The public site: a static Astro build of the published crawl data. Built by `npm run build:site`
// (site/build.ts), which gives each build its own root, output and cache folders (SPOTCHECK_SITE_*), so two builds,
// or a build beside the server and a crawl, never share a scratch folder; see docs/site.md.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'astro/config';

const env = process.env;
const root = env.SPOTCHECK_SITE_ROOT ?? fileURLToPath(new URL('./', import.meta.url));

export default defineConfig({
  // Astro writes `.astro/` (generated types, content manifests) under the root and, for an output folder outside
  // the working directory, `.astro/.prerender/` under that: site/build.ts makes both the build's own folder.
  root,
  srcDir: join(root, 'site'),
  publicDir: join(root, 'site', 'public'),
  outDir: env.SPOTCHECK_SITE_OUT ?? join(root, 'dist', 'site'),
  cacheDir: env.SPOTCHECK_SITE_CACHE ?? join(root, 'node_modules', '.astro-spotcheck'),
  output: 'static',
  trailingSlash: 'ignore',
  build: { format: 'directory', concurrency: 2, inlineStylesheets: 'always' },
  compressHTML: true,
  devToolbar: { enabled: false },
  telemetry: false,
  // Astro's runtime needs cookie 2; express (under the MCP SDK) hoists cookie 0.7 to the top. Bundling it makes
  // the build resolve it from Astro's own folder instead of the top of node_modules.
  vite: {
    cacheDir: env.SPOTCHECK_SITE_CACHE ? `${env.SPOTCHECK_SITE_CACHE}/vite` : undefined,
    ssr: { noExternal: ['cookie'] },
    environments: { prerender: { resolve: { noExternal: ['cookie'] } } },
  },
});
