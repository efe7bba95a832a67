/**
 * A real nginx in front of test instances, configured with the very `nginx` block of docs/deploy.md ("Three instances
 * behind nginx"), so the deployment guide's proxy settings are what the tests exercise. Only the addresses change
 * (the block's upstream ports become the test instances' ports and `listen 443 ssl` a loopback port without TLS),
 * and `fail_timeout` when a test asks for a shorter one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { waitFor } from './wait.ts';

/** Where Debian's `nginx` or `nginx-light` puts the binary; `NGINX_BIN` overrides. */
const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/**
 * Why nginx suites skip on this machine, null when they run. `.ci/run` installs `nginx-light` and sets
 * `SPOTCHECK_REQUIRE_NGINX=1`, so in CI a missing binary fails the suite instead of skipping it.
 */
export const nginxMissing: string | null =
  !existsSync(NGINX) && process.env.SPOTCHECK_REQUIRE_NGINX !== '1'
    ? `nginx not found at ${NGINX} (install Debian \`nginx-light\` or set NGINX_BIN): nginx suites skip`
    : null;
if (nginxMissing) console.warn(`[test] ${nginxMissing}`);

/** The ports docs/deploy.md gives its three instances. */
const DOC_PORTS = [8402, 8403, 8404];

/**
 * The `nginx` block of docs/deploy.md's "Three instances behind nginx", pointed at `upstreams` and `port`.
 * `failTimeoutSeconds` replaces the guide's `fail_timeout` (how long nginx keeps a failed instance out), so a test
 * that waits for a restarted instance to be back does not sit out the guide's 5 s each time; nginx counts it in whole
 * seconds, 1 at least.
 */
export function deployGuideConfig(
  upstreams: number[],
  port: number,
  options: { failTimeoutSeconds?: number } = {},
): string {
  const guide = readFileSync(join(import.meta.dirname, '../../docs/deploy.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## Three instances behind nginx'));
  const block = /```nginx\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined)
    throw new Error('docs/deploy.md has no nginx block under "Three instances behind nginx"');
  let config = block.replace(/listen 443 ssl;/, `listen 127.0.0.1:${port};`);
  DOC_PORTS.forEach((docPort, i) => {
    if (!config.includes(`127.0.0.1:${docPort} `))
      throw new Error(`the guide's upstream has no port ${docPort}`);
    config = config.replace(`127.0.0.1:${docPort} `, `127.0.0.1:${upstreams[i]} `);
  });
  const { failTimeoutSeconds } = options;
  if (failTimeoutSeconds === undefined) return config;
  if (!Number.isInteger(failTimeoutSeconds) || failTimeoutSeconds < 1)
    throw new Error('fail_timeout is whole seconds, 1 at least');
  const lines = config.match(/fail_timeout=\d+s/g) ?? [];
  if (lines.length !== upstreams.length)
    throw new Error(
      `the guide's upstream has ${lines.length} fail_timeout settings, not ${upstreams.length}`,
    );
  return config.replace(/fail_timeout=\d+s/g, `fail_timeout=${failTimeoutSeconds}s`);
}

export type TestNginx = { base: string; stop(): Promise<void> };

/** Starts nginx (one process, in the foreground) with `site` inside its `http` block; resolves once it answers. */
export async function startNginx(dir: string, port: number, site: string): Promise<TestNginx> {
  mkdirSync(dir, { recursive: true });
  const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`;
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'master_process off;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      '  access_log off;',
      `  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}`,
      site,
      '}',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    NGINX,
    ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  // Up once it answers; an exit ends the wait at once, and so does the deadline.
  const answers = await waitFor(
    async () =>
      child.exitCode !== null
        ? 'exited'
        : (await getFrom('127.0.0.1', `${base}/healthz`).catch(() => null))?.status === 200 && 'up',
    { what: 'nginx to answer', intervalMs: 100 },
  ).catch(() => 'no answer in time');
  if (answers === 'up')
    return {
      base,
      async stop() {
        child.kill('SIGTERM');
        await exited;
      },
    };
  child.kill('SIGKILL');
  throw new Error(`nginx did not start (${answers}): ${stderr.trim() || readLog(dir)}`);
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'error.log'), 'utf8').trim();
  } catch {
    return 'no error log';
  }
}

/**
 * A GET sent from `localAddress` (any 127.x.y.z on Linux), so nginx sees that client address, with `headers` as
 * given (a client may send its own `X-Forwarded-For`).
 */
export function getFrom(
  localAddress: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
