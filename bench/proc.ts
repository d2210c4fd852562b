// What the benches read of a process from /proc (Linux): its CPU time and its children's.

import fs from 'node:fs';

/** Clock ticks a second (USER_HZ, `getconf CLK_TCK`): 100 on Linux. */
const CLOCK_TICKS = 100;

/**
 * CPU seconds (user + system) a process and all its descendants (cluster workers, a server's backends) have used so
 * far.
 */
export function cpuSeconds(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
      for (const t of fs.readdirSync(`/proc/${p}/task`)) {
        const children = fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim();
        for (const c of children ? children.split(/\s+/) : []) visit(Number(c));
      }
    } catch {
      /* gone */
    }
  };
  visit(pid);
  return total;
}
