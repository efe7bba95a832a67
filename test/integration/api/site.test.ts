import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInput } from '../../../core/input-codes.ts';
import { SkipsQuerySchema } from '../../../core/request-schemas.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

/** A hand-made build folder: the handler serves whatever `DATA_DIR/site` points at. */
async function fakeBuild(dataDir: string, name: string, marker: string): Promise<string> {
  const dir = join(dataDir, 'site-builds', name);
  await mkdir(join(dir, 'v1', 'skips', 'page', '2'), { recursive: true });
  await mkdir(join(dir, 'receipts'), { recursive: true });
  await mkdir(join(dir, '_astro'), { recursive: true });
  await writeFile(join(dir, 'index.html'), `<h1>${marker}</h1>${'x'.repeat(2000)}`);
  await writeFile(join(dir, '404.html'), '<h1>Not found</h1>');
  await writeFile(join(dir, 'v1', 'skips', 'index.html'), 'skips page 1');
  await writeFile(join(dir, 'v1', 'skips', 'page', '2', 'index.html'), 'skips page 2');
  await writeFile(join(dir, 'v1', 'skips.json'), '{"page":1}');
  await writeFile(join(dir, 'v1', 'skips', '2.json'), '{"page":2}');
  await writeFile(
    join(dir, 'receipts', 'sc-aaaaaaaaaaaaaaaaaaaaaaaaaa.json'),
    '{"id":"sc-aaaaaaaaaaaaaaaaaaaaaaaaaa"}',
  );
  await writeFile(join(dir, '_astro', 'app.abc123.js'), 'console.log(1)');
  await writeFile(join(dataDir, 'secret.txt'), 'not public');
  return dir;
}

async function point(dataDir: string, name: string): Promise<void> {
  await symlink(join('site-builds', name), join(dataDir, 'site.tmp'));
  await rename(join(dataDir, 'site.tmp'), join(dataDir, 'site'));
}

describe('the built site, served from the API origin', () => {
  let t: TestService;
  const get = (path: string, headers: Record<string, string> = {}) =>
    t.service.app.fetch(new Request(`http://127.0.0.1${path}`, { headers }));

  beforeAll(async () => {
    t = await startTestService({}, {}, { listen: false });
  });
  afterAll(() => t.stop());

  it('answers a JSON 404 naming the build step before any build, and keeps API routes working', async () => {
    const res = await get('/');
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('build:site'),
    });
    expect((await get('/healthz')).status).toBe(200);
  });

  it('serves the build behind DATA_DIR/site and switches to a new build without a restart', async () => {
    await fakeBuild(t.dataDir, 'one', 'first build');
    await point(t.dataDir, 'one');
    expect(await (await get('/')).text()).toContain('first build');
    await fakeBuild(t.dataDir, 'two', 'second build');
    await point(t.dataDir, 'two');
    const res = await get('/');
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('second build');
  });

  it('maps the spec query forms of the skip listing onto the static paging', async () => {
    expect(await (await get('/v1/skips?page=2')).text()).toBe('skips page 2');
    expect(await (await get('/v1/skips?page=1')).text()).toBe('skips page 1');
    expect(await (await get('/v1/skips/page/2/')).text()).toBe('skips page 2');
    expect(await (await get('/v1/skips.json?page=2')).json()).toEqual({ page: 2 });
    const past = await get('/v1/skips?page=3');
    expect(past.status).toBe(404);
    expect((await past.json()).error.code).toBe('page_not_found');
    for (const bad of ['0', '-1', 'x', '1.5']) {
      const res = await get(`/v1/skips.json?page=${bad}`);
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('bad_page');
    }
  });

  it('refuses a bad page of the skip listing in the words of the schema /openapi.json publishes for it', async () => {
    for (const bad of ['0', '', 'x', '12345678']) {
      const refused = parseInput(SkipsQuerySchema, { page: bad });
      expect(refused.ok, bad).toBe(false);
      if (refused.ok) continue;
      for (const path of [`/v1/skips.json?page=${bad}`, `/v1/skips?page=${bad}`]) {
        const res = await get(path);
        expect(res.status, path).toBe(400);
        expect(await res.json(), path).toEqual({ error: { code: refused.code, message: refused.message } });
      }
    }
  });

  it('sets the cache headers of core/site-cache.ts and compresses text when asked', async () => {
    expect((await get('/receipts/sc-aaaaaaaaaaaaaaaaaaaaaaaaaa.json')).headers.get('cache-control')).toBe(
      'public, max-age=31536000, immutable',
    );
    expect((await get('/_astro/app.abc123.js')).headers.get('cache-control')).toContain('immutable');
    const home = await get('/', { 'accept-encoding': 'gzip, br' });
    expect(home.headers.get('cache-control')).toBe('public, max-age=300');
    expect(home.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(new Uint8Array(await home.arrayBuffer())).toString()).toContain('second build');
  });

  it('never serves a file outside the build, and shows the 404 page to browsers', async () => {
    for (const path of [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/%2e%2e%2fsecret.txt',
      '/a%00b',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('not public');
    }
    const page = await get('/no/such/page', { accept: 'text/html' });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('Not found');
  });
});
