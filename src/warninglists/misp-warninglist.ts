import { createHash } from 'node:crypto';
import type { KeyType } from '../common/indicators/indicators.js';
import { KIND_KEY_TYPES, type ListKind } from './warninglist-matcher/index.js';
import { WarninglistErrors } from './warninglists.errors.js';

/**
 * A warninglist document as the misp-warninglists project publishes them (lists/<name>/list.json:
 * `name`, `version`, `description`, `type`, `matching_attributes`, `list`), read into a list form.
 * Pure; refusals are 400 InvalidData naming the field, and 422 UnsupportedListType for `regex`.
 */
export interface MispList {
  name: string;
  description: string;
  version: string | null;
  kind: ListKind;
  keyTypes: KeyType[] | null;
  entries: unknown[];
  sha256: string;
}

const KIND_OF_TYPE: Record<string, ListKind> = { string: 'values', substring: 'substring', hostname: 'hostname', cidr: 'cidr' };

/** MISP attribute types and the key types they name (the parts of composite types, as MISP matches them). */
const KEY_TYPES_OF_ATTRIBUTE: Record<string, KeyType[]> = {
  'ip-src': ['IPAddress', 'IPNetwork'],
  'ip-dst': ['IPAddress', 'IPNetwork'],
  'ip-src|port': ['IPAddress'],
  'ip-dst|port': ['IPAddress'],
  'domain|ip': ['DomainName', 'IPAddress'],
  domain: ['DomainName'],
  hostname: ['DomainName'],
  'hostname|port': ['DomainName'],
  url: ['URL'],
  uri: ['URL'],
  link: ['URL'],
  md5: ['MD5Hash'],
  sha1: ['SHA1Hash'],
  sha256: ['SHA256Hash'],
  sha512: ['SHA512Hash'],
  'filename|md5': ['MD5Hash'],
  'filename|sha1': ['SHA1Hash'],
  'filename|sha256': ['SHA256Hash'],
  'filename|sha512': ['SHA512Hash'],
};

/** A MISP list name made URL-friendly: lowercase, other characters as `-`, at most 128. */
export function friendlyName(name: string): string {
  const friendly = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 128);
  return friendly === '' ? 'misp-warninglist' : friendly;
}

export function readMispDocument(document: unknown, bytes: string): MispList {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw WarninglistErrors.badDocument('the body is not a JSON object');
  const { name, version, description, type, matching_attributes: attributes, list } = document as Record<string, unknown>;
  if (typeof name !== 'string' || name.trim() === '') throw WarninglistErrors.badDocument('`name` must be a non-empty string');
  if (typeof type !== 'string') throw WarninglistErrors.badDocument('`type` must be a string');
  if (type === 'regex') throw WarninglistErrors.unsupportedType(type);
  const kind = KIND_OF_TYPE[type];
  if (kind === undefined) throw WarninglistErrors.badDocument('`type` must be one of string, substring, hostname, cidr, regex');
  if (!Array.isArray(list)) throw WarninglistErrors.badDocument('`list` must be an array');
  if (description !== undefined && typeof description !== 'string') throw WarninglistErrors.badDocument('`description` must be a string');
  if (version !== undefined && typeof version !== 'number' && typeof version !== 'string')
    throw WarninglistErrors.badDocument('`version` must be a number or string');
  if (attributes !== undefined && (!Array.isArray(attributes) || !attributes.every((entry) => typeof entry === 'string'))) {
    throw WarninglistErrors.badDocument('`matching_attributes` must be an array of strings');
  }
  // The attributes the list is meant for, as key types this kind can match; none known: the kind's default.
  const named = new Set(((attributes ?? []) as string[]).flatMap((attribute) => KEY_TYPES_OF_ATTRIBUTE[attribute] ?? []));
  const keyTypes = KIND_KEY_TYPES[kind].filter((keyType) => named.has(keyType));
  return {
    name: friendlyName(name),
    description: description ?? '',
    version: version === undefined ? null : String(version),
    kind,
    keyTypes: keyTypes.length > 0 ? keyTypes : null,
    entries: list,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}
