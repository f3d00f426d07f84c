import ipaddr from 'ipaddr.js';

// Addresses as numbers.

export interface Network {
  v6: boolean;
  /** First address: a number for IPv4 (exact below 2^53), a bigint for IPv6. */
  start: number | bigint;
  prefix: number;
}

/** A dotted IPv4 address as a number, read in place (compiling a list parses hundreds of thousands). */
export function v4Number(text: string, end = text.length): number {
  let value = 0;
  let octet = 0;
  for (let at = 0; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 46) {
      value = value * 256 + octet;
      octet = 0;
    } else {
      octet = octet * 10 + code - 48;
    }
  }
  return value * 256 + octet;
}

function v6Number(address: ipaddr.IPv6): bigint {
  let value = 0n;
  for (const part of address.parts) value = (value << 16n) | BigInt(part);
  return value;
}

export function maskV4(value: number, prefix: number): number {
  const size = 2 ** (32 - prefix);
  return Math.floor(value / size) * size;
}

export function maskV6(value: bigint, prefix: number): bigint {
  const shift = BigInt(128 - prefix);
  return (value >> shift) << shift;
}

/**
 * The network of a canonical address or network text; an IPv4-mapped IPv6 one (`::ffff:10.1.2.3`) also
 * as the IPv4 it maps, so that an IPv4 list catches it.
 */
export function networksOf(text: string): Network[] {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  if (!address.includes(':')) {
    return [{ v6: false, start: v4Number(address), prefix: slash < 0 ? 32 : Number(text.slice(slash + 1)) }];
  }
  const prefix = slash < 0 ? 128 : Number(text.slice(slash + 1));
  const parsed = ipaddr.IPv6.parse(address);
  const networks: Network[] = [{ v6: true, start: v6Number(parsed), prefix }];
  if (parsed.isIPv4MappedAddress() && prefix >= 96) {
    networks.push({ v6: false, start: v4Number(parsed.toIPv4Address().toString()), prefix: prefix - 96 });
  }
  return networks;
}

/** The host of a normalised URL (brackets of an IPv6 host removed). */
export function urlHost(url: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(url);
  if (!match) return undefined;
  return match[1].startsWith('[') ? match[1].slice(1, -1) : match[1];
}

export const isAddressText = (host: string) => host.includes(':') || /^\d+\.\d+\.\d+\.\d+$/.test(host);
