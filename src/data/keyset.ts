// The keys seen so far in one import file, to count lines that repeat an earlier line's key. A JS
// Set of a million key strings holds ~70-100 MB; this holds a 64-bit hash of each key in an
// open-addressing table of two Uint32Arrays: 16 MB at a million keys. Two keys whose 64-bit
// hashes are equal would count as a repeat: at a million keys the odds of any such pair are
// about 1 in 30 million (n^2 / 2^65), and it could only make the count one too high, never
// change what is stored (last wins is the store's own rule).

export class KeySet {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private mask: number;
  private used = 0;

  constructor(capacityPow2 = 1 << 16) {
    this.hi = new Uint32Array(capacityPow2);
    this.lo = new Uint32Array(capacityPow2);
    this.mask = capacityPow2 - 1;
  }

  get size(): number {
    return this.used;
  }

  /** Adds the key; true when it was already there. */
  addSeen(key: string): boolean {
    const [a, b] = hashOf(key);
    return this.insert(a, b);
  }

  /** Adds a key by its hash (keyHash, made where the key was parsed); true when it was already there. */
  addHash(a: number, b: number): boolean {
    a >>>= 0;
    b >>>= 0;
    return this.insert(a === 0 && b === 0 ? 1 : a, b); // (0, 0) marks an empty slot
  }

  private insert(a: number, b: number): boolean {
    let i = (a ^ Math.imul(b, 0x27d4eb2d)) & this.mask;
    for (;;) {
      const ha = this.hi[i];
      const hb = this.lo[i];
      if (ha === 0 && hb === 0) break;
      if (ha === a && hb === b) return true;
      i = (i + 1) & this.mask;
    }
    this.hi[i] = a;
    this.lo[i] = b;
    if (++this.used * 2 > this.mask) this.grow();
    return false;
  }

  private grow(): void {
    const hi = this.hi;
    const lo = this.lo;
    this.hi = new Uint32Array(hi.length * 2);
    this.lo = new Uint32Array(lo.length * 2);
    this.mask = this.hi.length - 1;
    this.used = 0;
    for (let i = 0; i < hi.length; i++) if (hi[i] !== 0 || lo[i] !== 0) this.insert(hi[i], lo[i]);
  }
}

/** Two independent 32-bit hashes of a string (FNV-1a, and a multiply-xorshift with another seed); never (0, 0). */
function hashOf(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a >>>= 0;
  b = (b ^ (b >>> 13)) >>> 0;
  if (a === 0 && b === 0) a = 1; // (0, 0) marks an empty slot
  return [a, b];
}

/** A record key's hash, as addHash takes it: the same as addSeen of the key's three parts joined. */
export function keyHash(operation: string, registration: string, state: string): [number, number] {
  return hashOf(`${operation}\u0001${registration}\u0001${state}`);
}
