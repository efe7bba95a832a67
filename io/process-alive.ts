/**
 * Whether a process of this machine is still running: signal 0 probes without touching it, and EPERM means it
 * runs under another user. Used to tell a lock or a folder left by a killed process from one still in use.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}
