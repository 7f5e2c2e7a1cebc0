import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`; 100 on Linux when it cannot be asked). */
const TICKS_PER_SECOND = ((): number => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isSafeInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/** The fields of /proc/<pid>/stat after the command name: state is field 3, ppid 4, utime 14 … cstime 17. */
function statFields(pid: string): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; the fields start after its last ')'.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // Gone meanwhile.
  }
}

/**
 * CPU time, in µs, that process `rootPid` and its live children have used (user + system), plus
 * what its children that already exited and were waited for used (the root's cutime + cstime), so
 * a backend that ends between two readings still counts. Read from /proc (Linux), so it is
 * resolved to the clock tick (10 ms per process at 100 ticks a second): sum it over many
 * decisions. Answers null when /proc or the process cannot be read.
 */
export function processTreeCpuUs(rootPid: number): number | null {
  const root = statFields(String(rootPid));
  if (root === null) return null;
  // Fields 14-17 (utime, stime, cutime, cstime) are at indexes 11-14 here.
  let ticks = Number(root[11]) + Number(root[12]) + Number(root[13]) + Number(root[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields !== null && Number(fields[1]) === rootPid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1e6) / TICKS_PER_SECOND;
}
