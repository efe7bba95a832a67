/**
 * The lock of a kind of run (crawl, bazaar) on one `DATA_DIR`: one run at a time writes a kind's work
 * folder, and a lock left by a process that is gone (SIGKILL, power loss) never blocks the next run or `--resume`.
 *
 * The lock is a file created whole and atomically: the owner's `{ pid, start, host, started_at }` is written to a
 * temporary file, then hard-linked to `<root>/run.lock`, which fails when the name exists (the O_EXCL of a link), so
 * nobody ever reads a half-written lock. A lock is held while its process lives: same host, the pid exists, and,
 * where the kernel tells a process's start time (`/proc/<pid>/stat` on Linux), the start time matches, so a pid
 * reused by another process after a crash does not hold the lock either. Nor does a process the kernel reports as
 * a zombie (killed, not yet reaped by its parent); one being torn down after SIGKILL (exiting, or SIGKILL pending)
 * is waited for briefly, polling its state, since `--resume` right after a kill is what an operator does. A stale
 * lock is renamed away (only one contender wins the rename) and the link tried again. The owner removes it on exit;
 * SIGKILL leaves it stale.
 *
 * Limits (docs/decisions.md): a lock names its host, so a `DATA_DIR` shared by two machines is refused rather than
 * taken over; without `/proc` (not Linux) a pid reused after a crash keeps the lock held until that process ends.
 */
import { readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { type ProcessState, processState } from '../process-alive.ts';

/** A held lock: `release()` removes it (idempotent). */
export type RunLock = { path: string; release(): Promise<void> };

type Owner = { pid: number; start: string | null; host: string; started_at: string };

/** Another live process holds the lock. */
export class RunLockedError extends Error {
  override name = 'RunLock.LockedError';
}

/** How the holder's process is looked at (the seams tests use). */
export type HolderProbe = { state: (pid: number) => ProcessState; sleep: (ms: number) => Promise<void> };

const SYSTEM_PROBE: HolderProbe = { state: (pid) => processState(pid), sleep: (ms) => sleepMs(ms) };

/**
 * How long a holder being torn down after SIGKILL is waited for: the kernel frees a large process's memory in well
 * under a second; past 5 s it is stuck in a system call (a hung disk), and taking its run over would not help.
 */
const DYING_WAIT_MS = 5000;
const DYING_POLL_MS = 50;

/**
 * Takes the lock of `root` (a kind's folder, e.g. `DATA_DIR/crawl`) for this process, or throws
 * {@link RunLockedError} naming the holder. `what` names the run in the message (`crawl`, `bazaar check`).
 * @example const lock = await acquireRunLock(paths.root, 'crawl'); try { … } finally { await lock.release() }
 */
export async function acquireRunLock(
  root: string,
  what: string,
  now: () => Date = () => new Date(),
  probe: HolderProbe = SYSTEM_PROBE,
): Promise<RunLock> {
  const path = join(root, 'run.lock');
  const me: Owner = {
    pid: process.pid,
    start: startOf(process.pid),
    host: hostname(),
    started_at: now().toISOString(),
  };
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await mkdir(root, { recursive: true });
  await writeFile(tmp, `${JSON.stringify(me)}\n`, { flag: 'wx' });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(tmp, path);
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'EEXIST' || attempt >= 5) throw error;
      }
      const holder = await readOwner(path);
      if (holder !== null) {
        const held = await holds(holder, probe);
        if (held !== 'free') throw lockedBy(holder, root, what, held);
      }
      // Stale (its process is gone) or unreadable: move it aside. If a contender took the stale lock over in the
      // meantime, the file moved is its live lock: put it back and give way.
      const aside = `${path}.stale.${process.pid}`;
      await rename(path, aside).catch(() => {});
      const moved = await readOwner(aside);
      const movedHeld = moved === null ? 'free' : await holds(moved, probe);
      if (moved !== null && movedHeld !== 'free') {
        await link(aside, path).catch(() => {});
        await rm(aside, { force: true });
        throw lockedBy(moved, root, what, movedHeld);
      }
      await rm(aside, { force: true });
    }
  } finally {
    await rm(tmp, { force: true });
  }
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      const holder = await readOwner(path);
      if (holder?.pid === process.pid && holder.host === me.host) await rm(path, { force: true });
    },
  };
}

function lockedBy(holder: Owner, root: string, what: string, held: 'held' | 'dying'): RunLockedError {
  const who = `another ${what} (pid ${holder.pid}, host ${holder.host}, started ${holder.started_at})`;
  if (held === 'dying')
    return new RunLockedError(
      `${who} on ${root} is still being torn down after SIGKILL ${DYING_WAIT_MS / 1000} s on; try again in a moment`,
    );
  return new RunLockedError(
    `${who} is running on ${root}; wait for it to finish, or stop it (a killed ${what} leaves a lock that is taken over)`,
  );
}

/**
 * Whether the lock's process holds it: `held` while it runs its own code (a lock of another host is taken as held:
 * its process cannot be seen); `free` once it is gone, a zombie, or its pid belongs to another process; a process
 * being torn down is polled for up to {@link DYING_WAIT_MS}, and is `dying` if it is still there then.
 */
async function holds(owner: Owner, probe: HolderProbe): Promise<'held' | 'free' | 'dying'> {
  if (owner.host !== hostname()) return 'held';
  for (let waited = 0; ; waited += DYING_POLL_MS) {
    const state = probe.state(owner.pid);
    if (state === 'gone' || state === 'zombie') return 'free';
    const start = startOf(owner.pid);
    if (owner.start !== null && start !== null && start !== owner.start) return 'free';
    if (state === 'running') return 'held';
    if (waited >= DYING_WAIT_MS) return 'dying';
    await probe.sleep(DYING_POLL_MS);
  }
}

async function readOwner(path: string): Promise<Owner | null> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as Partial<Owner>;
    if (!Number.isSafeInteger(value.pid) || typeof value.host !== 'string') return null;
    return {
      pid: value.pid as number,
      start: typeof value.start === 'string' ? value.start : null,
      host: value.host,
      started_at: String(value.started_at ?? 'unknown'),
    };
  } catch {
    return null;
  }
}

/** The start time of a process in clock ticks since boot (Linux `/proc/<pid>/stat` field 22); null elsewhere. */
function startOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
