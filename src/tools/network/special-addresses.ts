import { isIP } from 'node:net';
import os from 'node:os';

/**
 * Addresses a model-steered fetch must not reach: every block of the IANA IPv4 and IPv6
 * special-purpose registries, multicast, everything outside IPv6 global unicast, and this host's
 * own interface addresses (a service bound to 0.0.0.0 answers on them like on loopback).
 */

interface Range {
  family: 4 | 6;
  network: bigint;
  prefix: number;
  cidr: string;
  /** How a refusal names it, e.g. "a loopback address". */
  kind: string;
}

interface Parsed {
  family: 4 | 6;
  value: bigint;
}

const IPV4: Array<[string, string]> = [
  ['0.0.0.0/8', 'a "this network" address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol assignment'],
  ['192.0.2.0/24', 'a documentation address (TEST-NET-1)'],
  ['192.88.99.0/24', 'a 6to4 relay anycast address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address (TEST-NET-2)'],
  ['203.0.113.0/24', 'a documentation address (TEST-NET-3)'],
  ['224.0.0.0/4', 'a multicast address'],
  ['255.255.255.255/32', 'the limited broadcast address'],
  ['240.0.0.0/4', 'a reserved address'],
];

// Order matters: the first match names the refusal (::1/128 before ::/96).
const IPV6: Array<[string, string]> = [
  ['::/128', 'the unspecified address'],
  ['::1/128', 'a loopback address'],
  ['::/96', 'an IPv4-compatible address (deprecated)'],
  ['64:ff9b::/96', 'a NAT64 address'],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['100::/64', 'a discard-only address'],
  ['100:0:0:1::/64', 'a dummy address'],
  ['2001::/23', 'an IETF protocol assignment (Teredo, ORCHID and others)'],
  ['2001:db8::/32', 'a documentation address'],
  ['3fff::/20', 'a documentation address'],
  ['5f00::/16', 'a segment-routing (SRv6) address'],
  ['fc00::/7', 'a unique local (private) address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address (deprecated)'],
  ['ff00::/8', 'a multicast address'],
];

const MAPPED = range(6, '::ffff:0:0/96', '');
const SIX_TO_FOUR = range(6, '2002::/16', '');
// Everything public in IPv6 lies in 2000::/3; the rest is reserved or one of the blocks above.
const GLOBAL_UNICAST = range(6, '2000::/3', '');

const RANGES = [
  ...IPV4.map(([cidr, kind]) => range(4, cidr, kind)),
  ...IPV6.map(([cidr, kind]) => range(6, cidr, kind)),
];

function range(family: 4 | 6, cidr: string, kind: string): Range {
  const [network, prefix] = cidr.split('/') as [string, string];
  const parsed = parseAddress(network)!;
  return { family, network: parsed.value, prefix: Number(prefix), cidr, kind };
}

function contains(block: Range, address: Parsed): boolean {
  if (block.family !== address.family) return false;
  const shift = BigInt((address.family === 4 ? 32 : 128) - block.prefix);
  return address.value >> shift === block.network >> shift;
}

function ipv4Value(text: string): bigint {
  return text.split('.').reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.');
}

function ipv6Value(text: string): bigint {
  // A trailing dotted IPv4 (::ffff:127.0.0.1) becomes its two hex groups.
  const withHex = text.replace(/(\d+\.\d+\.\d+\.\d+)$/, (dotted) => {
    const value = ipv4Value(dotted);
    return `${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  });
  const [head = '', tail] = withHex.split('::');
  const groups = (part: string) => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail ?? '').length;
  const all = tail === undefined ? groups(head) : [...groups(head), ...Array(missing).fill('0'), ...groups(tail)];
  return all.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

/** An IP address in any form Node accepts ([::1], fe80::1%eth0), or undefined for a host name. */
function parseAddress(address: string): Parsed | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return { family, value: ipv4Value(bare) };
  if (family === 6) return { family, value: ipv6Value(bare.toLowerCase()) };
  return undefined;
}

/**
 * Read on every check, not once: interfaces come and go (a VPN, a container network), and a
 * test replaces os.networkInterfaces to see the check follow it.
 */
function ownAddress(address: Parsed): string | undefined {
  for (const [name, entries] of Object.entries(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.internal) continue; // loopback: named by its range
      const own = parseAddress(entry.address);
      if (own && own.family === address.family && own.value === address.value)
        return `this host's own address (interface ${name})`;
    }
  }
  return undefined;
}

/** An IPv6 address that carries an IPv4 one is judged by that IPv4 address. */
function embeddedIpv4(address: Parsed): string | undefined {
  if (contains(MAPPED, address)) {
    const ipv4 = ipv4Text(address.value & 0xffffffffn);
    const kind = specialAddress(ipv4);
    return kind && `an IPv4-mapped address of ${ipv4}, ${kind}`;
  }
  if (contains(SIX_TO_FOUR, address)) {
    const ipv4 = ipv4Text((address.value >> 80n) & 0xffffffffn);
    const kind = specialAddress(ipv4);
    return kind && `a 6to4 address of ${ipv4}, ${kind}`;
  }
  return undefined;
}

function rangeKind(address: Parsed): string | undefined {
  const block = RANGES.find((candidate) => contains(candidate, address));
  if (block) return `${block.kind} (${block.cidr})`;
  if (address.family === 6 && !contains(GLOBAL_UNICAST, address))
    return 'an address outside IPv6 global unicast (2000::/3)';
  return undefined;
}

/**
 * What makes this address one a fetch must not reach, e.g. "a loopback address (127.0.0.0/8)",
 * or undefined for a public address (and for a host name, which is judged once resolved).
 */
export function specialAddress(address: string): string | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return undefined;
  const own = ownAddress(parsed);
  if (own) return own;
  if (parsed.family === 6 && (contains(MAPPED, parsed) || contains(SIX_TO_FOUR, parsed))) return embeddedIpv4(parsed);
  return rangeKind(parsed);
}
