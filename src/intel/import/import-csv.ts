import { parse } from 'csv-parse/sync';
import { inferObjectType, KEY_TYPES, type KeyType, normalizeKey, type ObjectKey } from '../../common/indicators/indicators.js';
import { ImportErrors } from './import.errors.js';

export interface CsvColumns {
  typeColumn: string;
  valueColumn: string;
  contextColumns: string[];
}

/**
 * Key type names of common feeds (MISP attribute types, plain words), lower case, beside our own
 * (`MD5Hash`, any case). An address with a prefix (`ip-dst` `10.0.0.0/8`) is a network.
 */
const TYPE_NAMES: Record<string, KeyType> = {
  ...Object.fromEntries(KEY_TYPES.map((type) => [type.toLowerCase(), type])),
  md5: 'MD5Hash',
  sha1: 'SHA1Hash',
  sha256: 'SHA256Hash',
  sha512: 'SHA512Hash',
  domain: 'DomainName',
  hostname: 'DomainName',
  fqdn: 'DomainName',
  url: 'URL',
  uri: 'URL',
  link: 'URL',
  ip: 'IPAddress',
  'ip-src': 'IPAddress',
  'ip-dst': 'IPAddress',
  ipv4: 'IPAddress',
  ipv6: 'IPAddress',
  cidr: 'IPNetwork',
  network: 'IPNetwork',
  subnet: 'IPNetwork',
};

function keyTypeOf(name: string, value: string): KeyType | undefined {
  const type = TYPE_NAMES[name.trim().toLowerCase()];
  return type === 'IPAddress' && value.includes('/') ? 'IPNetwork' : type;
}

/**
 * One batch item per distinct key of a CSV with a header row: the key from `typeColumn` and
 * `valueColumn`, the context from `base` plus the non-empty `contextColumns` cells of its row. A row
 * whose key is not valid still becomes an item, one the batch reports as failed (with the row's type and
 * value), so that every row is accounted for. A later row of the same key is dropped (first one wins).
 */
export function csvItems(text: string, columns: CsvColumns, base: Record<string, unknown>): unknown[] {
  let header: string[] = [];
  let rows: Record<string, string>[];
  try {
    rows = parse(text, {
      bom: true,
      skip_empty_lines: true,
      columns: (names: string[]) => (header = names),
    }) as Record<string, string>[];
  } catch (error) {
    throw ImportErrors.malformedCsv((error as Error).message);
  }
  for (const column of [columns.typeColumn, columns.valueColumn, ...columns.contextColumns]) {
    if (!header.includes(column)) throw ImportErrors.missingColumn(column);
  }
  const seen = new Set<string>();
  const items: unknown[] = [];
  for (const row of rows) {
    const rawType = row[columns.typeColumn];
    const value = row[columns.valueColumn].trim();
    const context = { ...base };
    for (const column of columns.contextColumns) if (row[column] !== '') context[column] = row[column];
    const type = keyTypeOf(rawType, value);
    let key: ObjectKey | undefined;
    try {
      key = type === undefined ? undefined : normalizeKey({ type, value });
    } catch {
      key = undefined;
    }
    if (key === undefined) {
      // Left to the batch's checks, which name what is wrong.
      items.push({ type: type === undefined ? rawType : inferObjectType([{ type, value }]), keys: [{ type: type ?? rawType, value }], context });
      continue;
    }
    const id = `${key.type}\n${key.value}`;
    if (seen.has(id)) continue;
    seen.add(id);
    items.push({ type: inferObjectType([key]), keys: [key], context });
  }
  return items;
}
