import { KEY_TYPES, type KeyType } from '../../common/indicators/indicators.js';

// What a list is and does, and what a warning says: the vocabulary the DTOs, the service and the rules share.

export const LIST_KINDS = ['values', 'cidr', 'hostname', 'substring'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

/** Each action does what the ones before it do, and more. */
export const LIST_ACTIONS = ['annotate', 'excludeFromExport', 'rejectOnIngest'] as const;
export type ListAction = (typeof LIST_ACTIONS)[number];
export const actionRank = (action: ListAction): number => LIST_ACTIONS.indexOf(action);

export const MATCH_KINDS = ['exact', 'subdomain', 'contained', 'overlap', 'substring'] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

export interface Warning {
  list: string;
  entry: string;
  action: ListAction;
  match: MatchKind;
}

/** The key types each kind can match (a list's default `keyTypes`). */
export const KIND_KEY_TYPES: Record<ListKind, readonly KeyType[]> = {
  values: KEY_TYPES,
  cidr: ['IPAddress', 'IPNetwork', 'URL'],
  hostname: ['DomainName', 'URL'],
  substring: ['DomainName', 'URL'],
};
