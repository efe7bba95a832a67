/**
 * Whether a process of this machine is still running: signal 0 probes without touching it, and EPERM means it
 * runs under another user. Used to tell a lock or a folder left by a killed process from one still in use.
 *
 * Where the kernel tells more (`/proc` on Linux), a process that is a zombie (exited, not yet reaped by its parent)
 * or is being torn down (exiting, or SIGKILL pending) is not running its own code any more: signal 0 still reaches
 * it, but it will never write another byte of its own.
 */
import { readFileSync } from 'node:fs';

/**
 * What the kernel says of a process: `running`; `zombie` (exited, or dead and not yet reaped); `dying` (exiting, or
 * SIGKILL pending: it never runs its own code again, but a system call it was in may still complete); `gone`.
 */
export type ProcessState = 'running' | 'zombie' | 'dying' | 'gone';

/** PF_EXITING in the flags of `/proc/<pid>/stat` (field 9): the process has started to exit. */
const PF_EXITING = 0x4;
/** SIGKILL is signal 9: bit 8 of the pending masks of `/proc/<pid>/status`. */
const SIGKILL_BIT = 1n << 8n;

/** Reads a `/proc` file (the seam tests use); throws when the process is gone. */
export type ReadProc = (path: string) => string;

const readProc: ReadProc = (path) => readFileSync(path, 'utf8');

/**
 * The state of `pid` (see {@link ProcessState}). Without `/proc` (not Linux) it is `running` or `gone`, by signal 0.
 * @example processState(process.pid) // 'running'
 */
export function processState(pid: number, read: ReadProc = readProc): ProcessState {
  if (read === readProc && !isSignalable(pid)) return 'gone';
  let stat: string;
  try {
    stat = read(`/proc/${pid}/stat`);
  } catch {
    return read === readProc && !existsProc() && isSignalable(pid) ? 'running' : 'gone';
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0] ?? '';
  if (state === 'Z' || state === 'X' || state === 'x') return 'zombie';
  const flags = Number(fields[6]);
  if (Number.isSafeInteger(flags) && (flags & PF_EXITING) !== 0) return 'dying';
  try {
    const status = read(`/proc/${pid}/status`);
    for (const name of ['SigPnd', 'ShdPnd']) {
      const mask = new RegExp(`^${name}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1];
      if (mask !== undefined && (BigInt(`0x${mask}`) & SIGKILL_BIT) !== 0n) return 'dying';
    }
  } catch {
    return 'gone';
  }
  return 'running';
}

/**
 * True while `pid` exists and, where `/proc` tells, is not a zombie. A process being torn down counts as alive: a
 * write it was in may still land (the run lock waits for it to go, `io/runs/lock.ts`).
 */
export function isProcessAlive(pid: number): boolean {
  const state = processState(pid);
  return state === 'running' || state === 'dying';
}

function isSignalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

/** Whether this machine has `/proc` at all (else a missing `/proc/<pid>` says nothing). */
function existsProc(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}
