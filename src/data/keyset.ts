// The keys seen so far in one import file, to count lines that repeat an earlier line's key. A JS
// Set of a million key strings holds ~70-100 MB; this holds a 64-bit hash of each key in an
// open-addressing table of two Uint32Arrays: 16 MB at a million keys. Two keys whose 64-bit
// hashes are equal would count as a repeat: at a million keys the odds of any such pair are
// about 1 in 30 million (n^2 / 2^65), and it could only make the count one too high, never
// change what is stored (last wins is the store's own rule).
//
// An import that needs more than the count keeps a value or two beside each key, in arrays of the
// table's size, only when asked for (KeyValues): the day of the row applied, for a register whose
// newest operation wins (data/mvs.ts), and for a dry run what the store held under the key and what
// the file leaves there, to tell records added, changed and unchanged apart.

/** The values kept beside each key, when asked for. */
interface KeyValues {
  /** The day of the row applied under the key (`day`). */
  readonly days?: boolean;
  /** A dry run's view of the key (`state`, `operation`, `stored`). */
  readonly dry?: boolean;
}

export class KeySet {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private mask: number;
  private used = 0;
  /** Per slot (KeyValues.days): the day of the row applied under the key. */
  day: Uint16Array | null;
  /** Per slot (KeyValues.dry): flags a dry run keeps (data/import.ts). */
  state: Uint8Array | null;
  /** Per slot (KeyValues.dry): the index of the key's operation in the import's list of them. */
  operation: Uint8Array | null;
  /** Per slot (KeyValues.dry): a 32-bit hash of the payload the store held under the key. */
  stored: Uint32Array | null;
  /** The slot of the key last added or found (valid until the next add, which may grow the table). */
  slot = -1;

  constructor(capacityPow2 = 1 << 16, values: KeyValues = {}) {
    this.hi = new Uint32Array(capacityPow2);
    this.lo = new Uint32Array(capacityPow2);
    this.mask = capacityPow2 - 1;
    this.day = values.days ? new Uint16Array(capacityPow2) : null;
    this.state = values.dry ? new Uint8Array(capacityPow2) : null;
    this.operation = values.dry ? new Uint8Array(capacityPow2) : null;
    this.stored = values.dry ? new Uint32Array(capacityPow2) : null;
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

  /** Every slot holding a key, for a pass over the values at the end of an import. */
  *slots(): Generator<number> {
    for (let i = 0; i <= this.mask; i++) if (this.hi[i] !== 0 || this.lo[i] !== 0) yield i;
  }

  private insert(a: number, b: number): boolean {
    const i = this.find(a, b);
    this.slot = i;
    if (this.hi[i] === a && this.lo[i] === b) return true;
    this.hi[i] = a;
    this.lo[i] = b;
    if (++this.used * 2 > this.mask) this.grow();
    return false;
  }

  /** The key's slot, or the empty slot where it would go. */
  private find(a: number, b: number): number {
    let i = (a ^ Math.imul(b, 0x27d4eb2d)) & this.mask;
    for (;;) {
      const ha = this.hi[i];
      const hb = this.lo[i];
      if ((ha === 0 && hb === 0) || (ha === a && hb === b)) return i;
      i = (i + 1) & this.mask;
    }
  }

  private grow(): void {
    const { hi, lo, day, state, operation, stored } = this;
    const size = hi.length * 2;
    this.hi = new Uint32Array(size);
    this.lo = new Uint32Array(size);
    this.mask = size - 1;
    this.day = day && new Uint16Array(size);
    this.state = state && new Uint8Array(size);
    this.operation = operation && new Uint8Array(size);
    this.stored = stored && new Uint32Array(size);
    for (let i = 0; i < hi.length; i++) {
      if (hi[i] === 0 && lo[i] === 0) continue;
      const j = this.find(hi[i], lo[i]);
      this.hi[j] = hi[i];
      this.lo[j] = lo[i];
      if (day && this.day) this.day[j] = day[i];
      if (state && this.state) this.state[j] = state[i];
      if (operation && this.operation) this.operation[j] = operation[i];
      if (stored && this.stored) this.stored[j] = stored[i];
    }
    // The key just added has moved.
    this.slot = this.find(hi[this.slot], lo[this.slot]);
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

/** A 32-bit hash of a text (a payload a dry run compares with what the store holds). */
export function textHash(text: string): number {
  return hashOf(text)[0];
}
