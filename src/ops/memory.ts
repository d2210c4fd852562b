// How the serving process's heap grows. Set from the code rather than the command line so that it
// holds however the service is started (npm start, the Docker image, the reglookup binary), and
// because NODE_OPTIONS does not accept it.

import v8 from 'node:v8';

/**
 * V8 lets the old generation grow to up to about four times what survived the last full collection
 * before it collects again. At several thousand requests a second the garbage promoted between
 * collections then lifts RSS by about half within half a minute; a factor of two keeps it flat,
 * without costing throughput (bench/PROFILE.md, "Third round").
 * A Node release whose V8 no longer knows the flag is caught by test/integration/memory.test.ts.
 */
export const HEAP_FLAGS = ['--heap-growing-percent=100'] as const;

export function tuneHeap(): void {
  for (const flag of HEAP_FLAGS) v8.setFlagsFromString(flag);
}
