import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Every `.ts` file below `dir`, specs left out. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('OpenAPI schema names', () => {
  // The document names a schema after its class: two view or DTO classes of one name in two areas would be
  // served as one schema, the first overwritten by the second (seen: sources' and history's ClaimView).
  it('are the names of exactly one view or DTO class each', () => {
    const places = new Map<string, string[]>();
    for (const file of sources(SRC)) {
      for (const [, name] of readFileSync(file, 'utf8').matchAll(/^export class (\w+(?:View|Dto))\b/gm)) {
        places.set(name, [...(places.get(name) ?? []), file.slice(SRC.length + 1)]);
      }
    }
    expect([...places].filter(([, files]) => files.length > 1)).toEqual([]);
  });
});
