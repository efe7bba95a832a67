// The public site (issue 11): a static Astro build of the published crawl data. Built by `npm run build:site`
// (site/build.ts), which sets the output folder and the data input; see docs/site.md.
import { defineConfig } from 'astro/config';

export default defineConfig({
  srcDir: './site',
  publicDir: './site/public',
  outDir: process.env.SPOTCHECK_SITE_OUT ?? './dist/site',
  cacheDir: process.env.SPOTCHECK_SITE_CACHE ?? './node_modules/.astro-spotcheck',
  output: 'static',
  trailingSlash: 'ignore',
  build: { format: 'directory', concurrency: 2, inlineStylesheets: 'always' },
  compressHTML: true,
  devToolbar: { enabled: false },
  telemetry: false,
  // Astro's runtime needs cookie 2; express (under the MCP SDK) hoists cookie 0.7 to the top. Bundling it makes
  // the build resolve it from Astro's own folder instead of the top of node_modules.
  vite: {
    ssr: { noExternal: ['cookie'] },
    environments: { prerender: { resolve: { noExternal: ['cookie'] } } },
  },
});
