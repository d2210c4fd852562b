// The heap in use after a full garbage collection, without starting node with --expose-gc.

import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | undefined;

export function heapAfterGc(): number {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
