/**
 * A server's process, seen from outside through /proc (Linux): which pid listens on a port,
 * its resident set (VmRSS) and its CPU time. bench/lib/server.ts does not hand out the
 * child's pid, so it is found by the listening socket's inode.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

function listeningInode(port: number): string | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[1].endsWith(`:${hex}`) && f[3] === '0A') return f[9];
    }
  }
  return undefined;
}

const ppidOf = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
};

const holds = (pid: number, link: string): boolean => {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === link;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
};

/** The pid of the process listening on 127.0.0.1:`port` (children of this process first). */
export function pidOfPort(port: number): number {
  const inode = listeningInode(port);
  if (!inode) throw new Error(`nothing listens on port ${port}`);
  const link = `socket:[${inode}]`;
  const pids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const children = pids.filter((p) => ppidOf(p) === process.pid);
  for (const p of [...children, ...pids.filter((p) => !children.includes(p))]) if (holds(p, link)) return p;
  throw new Error(`no readable process holds the listening socket of port ${port}`);
}

/** VmRSS of `pid` in bytes. */
export function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** User + system CPU time of `pid` in µs (clock ticks are 1/100 s on Linux). */
export function cpuUsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

/** User and system CPU time of `pid` in µs, apart (system: the kernel's share, e.g. socket writes). */
export function cpuSplitOf(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) * 10_000, system: Number(f[12]) * 10_000 };
}

/** How many sockets `pid` holds open (connections and listeners of every kind). */
export function socketsOf(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}
