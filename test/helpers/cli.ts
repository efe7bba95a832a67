/**
 * Runs one of the project's CLIs (`api/<file>`) as an operator would against `dataDir`, started as
 * test/helpers/entry.ts says.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ENTRY_ENV } from './entry.ts';

const ROOT = join(import.meta.dirname, '../..');

export type CliRun = { code: number; stdout: string; stderr: string };

/**
 * Runs `api/<file>` with `args`; only PATH, HOME, the compile cache, DATA_DIR and `env` are passed (vitest itself sets
 * BASE_URL to '/').
 */
export function runCli(
  file: string,
  args: string[],
  dataDir: string,
  env: Record<string, string> = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'api', file), ...args],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...ENTRY_ENV,
          DATA_DIR: dataDir,
          ...env,
        },
        timeout: 90_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The key a `keys:issue` run printed, or '' when it printed none. */
export function issuedKey(run: CliRun): string {
  return /shown once, store it now\): (\S+)/.exec(run.stdout)?.[1] ?? '';
}
