// Sets of IP addresses given as CIDRs or single addresses (IPv4 and IPv6): the proxies TRUST_PROXY
// names, and each caller's allow-list. IPv4-mapped IPv6 addresses (::ffff:10.0.0.1, what a socket
// listening on :: reports for an IPv4 client, in either spelling) match as the IPv4 address they
// carry: node's BlockList compares them so (test/unit/ops-net.test.ts holds it to that).

import net from 'node:net';

export interface AddressSet {
  /** The entries as given, for logs and listings. */
  readonly list: readonly string[];
  has(address: string): boolean;
}

export class AddressListError extends Error {}

const ENTRY_RE = /^([^/]+?)(?:\/(\d{1,3}))?$/;

/** The problem with one entry, or null when it is an address or a CIDR. */
export function addressEntryProblem(item: string): string | null {
  const m = ENTRY_RE.exec(item);
  const family = m ? net.isIP(m[1]) : 0;
  if (!m || family === 0) return `'${item}' is not an IP address or CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)`;
  const bits = m[2] === undefined ? undefined : Number(m[2]);
  if (bits !== undefined && bits > (family === 6 ? 128 : 32))
    return `'${item}' has a prefix longer than ${family === 6 ? 128 : 32} bits`;
  return null;
}

/** A set of the entries; throws AddressListError naming the first bad one. */
export function addressSet(items: readonly string[]): AddressSet {
  const block = new net.BlockList();
  for (const item of items) {
    const problem = addressEntryProblem(item);
    if (problem) throw new AddressListError(problem);
    const m = ENTRY_RE.exec(item) as RegExpExecArray;
    const family = net.isIP(m[1]);
    block.addSubnet(
      m[1],
      m[2] === undefined ? (family === 6 ? 128 : 32) : Number(m[2]),
      family === 6 ? 'ipv6' : 'ipv4',
    );
  }
  return {
    list: items,
    has(address: string): boolean {
      // A string that is not an address (a closed socket's '') is in no set: check() says false.
      return block.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');
    },
  };
}

/** Splits a comma-separated list, dropping empty entries and spaces. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
