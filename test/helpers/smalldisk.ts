// A small filesystem of the test's own, to fill up: a tmpfs mount (root may mount; CI runs as root).
// Where mounting is not allowed, the tests that need it are skipped with a message, except under
// CI=true, where they fail.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SmallDisk {
  readonly dir: string;
  /** Writes a filler file until the filesystem has no space left. */
  fill(): void;
  /** Removes the filler. */
  free(): void;
  /** Unmounts and removes the mount point. */
  remove(): void;
}

let mountable: boolean | undefined;

/** Whether this process may mount a tmpfs (asked once, by trying). */
export function canMount(): boolean {
  if (mountable === undefined) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-mnt-probe-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
      execFileSync('umount', [dir], { stdio: 'ignore' });
      mountable = true;
    } catch {
      mountable = false;
      if (process.env.CI !== 'true')
        process.stderr.write('disk-full tests skipped: this user may not mount a tmpfs (run as root)\n');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return mountable || process.env.CI === 'true';
}

export function describeSmallDisk(name: string, fn: () => void): void {
  (canMount() ? describe : describe.skip)(name, fn);
}

export function mountSmallDisk(sizeKiB: number): SmallDisk {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k`, 'tmpfs', dir]);
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, 'a');
      const block = Buffer.alloc(4096, 1);
      try {
        for (;;) fs.writeSync(fd, block);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      } finally {
        fs.closeSync(fd);
      }
    },
    free() {
      fs.rmSync(filler, { force: true });
    },
    remove() {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
