/**
 * Starts the real service for a test: a fresh DATA_DIR, the SSRF gate on with loopback allowed only through the
 * explicit test configuration (`PROBE_ALLOW_CIDRS`), on a real port or through `app.fetch`.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION } from '../../api/app.ts';
import { type Config, readConfig } from '../../api/config.ts';
import { openApiDocument } from '../../api/openapi.ts';
import { createService, listen, type Service, type ServiceOverrides } from '../../api/service.ts';
import { openApiChecker } from './openapi.ts';

export const EXEMPT_SECRET = 'test-exempt-secret-0123456789';
export const SELF_SECRET = 'test-self-secret-0123456789ab';

export type TestService = {
  service: Service;
  config: Config;
  url: string;
  dataDir: string;
  /** Stops the server and the service; keeps DATA_DIR when `keepData` (restart tests). */
  stop(options?: { keepData?: boolean }): Promise<void>;
};

/** Starts the service with test defaults; `env` overrides variables, `overrides` the injected seams. */
export async function startTestService(
  env: Record<string, string> = {},
  overrides: ServiceOverrides = {},
  options: { dataDir?: string; listen?: boolean } = {},
): Promise<TestService> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'spotcheck-test-'));
  const config = readConfig({
    DATA_DIR: dataDir,
    PROBE_ALLOW_CIDRS: '127.0.0.0/8',
    TRUST_PROXY: '1',
    EXEMPT_KEYS: `partner:${EXEMPT_SECRET},self:${SELF_SECRET}`,
    ...env,
  });
  const service = await createService(config, { fsync: false, ...overrides });
  let server: Server | null = null;
  let url = config.baseUrl;
  if (options.listen !== false) {
    const listening = await listen(service, '127.0.0.1', 0);
    server = listening.server;
    url = listening.url;
  }
  return {
    service,
    config,
    url,
    dataDir,
    async stop(stopOptions = {}) {
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server?.close(() => resolve()));
      }
      await service.close();
      if (!stopOptions.keepData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A request through `app.fetch` as the proxy forwards it: the socket peer is `peer` (default the loopback proxy
 * that TRUSTED_PROXIES trusts by default) and `X-Forwarded-For` names the client `ip` (TRUST_PROXY is on in tests).
 * Every answer to an operation `/openapi.json` describes is held to it (documented status, body matching its
 * schema): a test that gets an answer the document does not describe fails there.
 */
export async function appFetch(
  service: Service,
  path: string,
  init: RequestInit & { ip?: string; peer?: string } = {},
): Promise<Response> {
  const { ip = '203.0.113.7', peer = PROXY, headers, ...rest } = init;
  const merged = new Headers(headers);
  merged.set('x-forwarded-for', ip);
  const request = fromPeer(new Request(`http://spotcheck.test${path}`, { ...rest, headers: merged }), peer);
  const response = await service.app.fetch(request);
  const template = published.templateOf(request.method, new URL(request.url).pathname);
  if (template !== null) await published.check(request.method, template, response);
  return response;
}

/** The loopback proxy of the tests: inside the default TRUSTED_PROXIES. */
export const PROXY = '127.0.0.1';

/**
 * Gives a request made for `app.fetch` the socket address it would have on a real port (h3 reads `request.ip`);
 * without one the service treats the peer as unknown and trusts no forwarded address from it.
 */
export function fromPeer(request: Request, peer: string = PROXY): Request {
  Object.defineProperty(request, 'ip', { value: peer });
  return request;
}

/** The document as the service publishes it (its schemas do not depend on the origin). */
const published = openApiChecker(openApiDocument('http://spotcheck.test', API_VERSION));
