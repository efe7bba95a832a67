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
});
