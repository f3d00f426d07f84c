import type { ObjectKey } from '../../common/indicators/indicators.js';
import { isAddressText, networksOf, urlHost, type Network } from './addresses.js';

// Probes: what the rules derive from one key, derived once for all lists.

const stripDot = (value: string) => (value.endsWith('.') ? value.slice(0, -1) : value);

export class KeyProbe {
  private suffixesOf?: string[];
  private networksOf?: Network[];
  private loweredOf?: string;

  constructor(readonly key: ObjectKey) {}

  /** The host of a domain or URL key (not an address) and each parent domain, the host first; empty when none. */
  get suffixes(): string[] {
    if (this.suffixesOf === undefined) {
      const { key } = this;
      const host = key.type === 'DomainName' ? key.value : key.type === 'URL' ? urlHost(key.value) : undefined;
      this.suffixesOf = [];
      if (host !== undefined && host !== '' && !isAddressText(host)) {
        const name = stripDot(host);
        for (let at = 0; at >= 0; at = name.indexOf('.', at) + 1 || -1) this.suffixesOf.push(at === 0 ? name : name.slice(at));
      }
    }
    return this.suffixesOf;
  }

  /** The networks an address, network or URL with an address host stands for; empty when none. */
  get networks(): Network[] {
    if (this.networksOf === undefined) {
      const { key } = this;
      let text: string | undefined = key.value;
      if (key.type === 'URL') {
        const host = urlHost(key.value);
        text = host !== undefined && isAddressText(host) ? host : undefined;
      } else if (key.type !== 'IPAddress' && key.type !== 'IPNetwork') {
        text = undefined;
      }
      try {
        this.networksOf = text === undefined ? [] : networksOf(text);
      } catch {
        this.networksOf = [];
      }
    }
    return this.networksOf;
  }

  /** The lowercased value of a domain or URL key (what substrings are sought in); empty for other keys. */
  get lowered(): string {
    this.loweredOf ??= this.key.type === 'DomainName' || this.key.type === 'URL' ? this.key.value.toLowerCase() : '';
    return this.loweredOf;
  }
}
