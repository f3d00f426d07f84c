// tr46 and whatwg-url ship no typings; only what src/common/indicators uses is declared.

declare module 'tr46' {
  export interface Tr46Options {
    checkBidi?: boolean;
    checkHyphens?: boolean;
    checkJoiners?: boolean;
    ignoreInvalidPunycode?: boolean;
    transitionalProcessing?: boolean;
    useSTD3ASCIIRules?: boolean;
    verifyDNSLength?: boolean;
  }
  /** UTS #46 ToASCII; null when the name is not valid under the options. */
  export function toASCII(domainName: string, options?: Tr46Options): string | null;
}

declare module 'whatwg-url' {
  /** The WHATWG URL class, implemented in JavaScript (same API as the global URL). */
  export class URL {
    constructor(url: string, base?: string);
    readonly href: string;
    readonly hostname: string;
  }
}
