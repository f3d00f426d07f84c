import { BlockList, isIP } from 'node:net';

export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `10.0.0.0/8`, `2001:db8::/32`: an address and a prefix length within its family; undefined otherwise. */
export function parseCidr(text: string): Cidr | undefined {
  const match = /^([^/\s]+)\/(\d{1,3})$/.exec(text);
  if (!match) return undefined;
  const version = isIP(match[1]);
  const prefix = Number(match[2]);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address: match[1], prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A set of networks to test client addresses against (the CIDRs must have been checked by parseCidr). */
export function networkSet(cidrs: readonly string[]): BlockList {
  const set = new BlockList();
  for (const cidr of cidrs) {
    const { address, prefix, family } = parseCidr(cidr)!;
    set.addSubnet(address, prefix, family);
  }
  return set;
}

/**
 * The address as the client's IPv4 when it is one mapped into IPv6 (`::ffff:127.0.0.1`, what a dual-stack
 * listener reports for IPv4 peers), so that IPv4 networks match it and it is stored the way clients know it.
 */
export function plainAddress(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1] : address;
}

/** Whether `address` (as given by Express's `request.ip`) lies in one of the networks. */
export function inNetworks(networks: BlockList, address: string | undefined): boolean {
  const plain = plainAddress(address);
  const version = plain === undefined ? 0 : isIP(plain);
  return version !== 0 && networks.check(plain!, version === 4 ? 'ipv4' : 'ipv6');
}
