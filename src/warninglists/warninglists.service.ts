import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { bareKey, refangValue } from '../common/indicators/bare-key.js';
import { KEY_TYPES, normalizeKey, type KeyType, type ObjectKey } from '../common/indicators/indicators.js';
import { afterIdCursor, afterIdFromCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../common/pagination/page.js';
import { assertTagMatches, TaggedResult } from '../common/tags/tag.js';
import {
  MAX_CHECK_VALUES,
  MAX_LIST_ENTRIES,
  type CheckDto,
  type CheckResultView,
  type CreateWarninglistDto,
  type EntriesQueryDto,
  type ImportWarninglistQueryDto,
  type ReplaceWarninglistDto,
  type UpdateWarninglistDto,
  type WarninglistBodyDto,
  type WarninglistNameView,
  type WarninglistView,
} from './dto/warninglist.dto.js';
import { readMispDocument } from './misp-warninglist.js';
import { WarninglistMatcherService } from './warninglist-matcher.service.js';
import { EntryError, KIND_KEY_TYPES, normalizeEntry, type ListKind } from './warninglist-matcher/index.js';
import { WarninglistErrors } from './warninglists.errors.js';
import { WarninglistsRepository, type ListRecord, type ListRow } from './warninglists.repository.js';

function toView(row: ListRow): WarninglistView {
  return {
    name: row.name,
    description: row.description,
    kind: row.kind as ListKind,
    keyTypes: (row.keyTypes ?? KIND_KEY_TYPES[row.kind as ListKind]) as KeyType[],
    action: row.action as WarninglistView['action'],
    enabled: row.enabled,
    entryCount: row.entryCount,
    version: row.version,
    sha256: row.sha256,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Entries as stored (normalised, each once, in their first order); 413 past the limit, 400 naming the first bad one. */
export function normalizeEntries(kind: ListKind, raw: unknown[]): string[] {
  if (raw.length > MAX_LIST_ENTRIES) throw WarninglistErrors.tooManyEntries(MAX_LIST_ENTRIES);
  const entries = new Set<string>();
  raw.forEach((entry, position) => {
    try {
      entries.add(normalizeEntry(kind, entry));
    } catch (error) {
      if (error instanceof EntryError) throw WarninglistErrors.badEntry(position, error.message);
      throw error;
    }
  });
  return [...entries];
}

/** `keyTypes` as stored: null for the kind's default; 400 for a type the kind cannot match. */
function keyTypesOf(kind: ListKind, keyTypes: KeyType[] | null | undefined): KeyType[] | null {
  if (keyTypes === undefined || keyTypes === null) return null;
  const fit = KIND_KEY_TYPES[kind];
  if (!keyTypes.every((type) => fit.includes(type))) throw WarninglistErrors.keyTypesNotFit(kind, fit);
  return [...new Set(keyTypes)];
}

/** The resource `/intel/warninglists` (extensions §15): lists, their entries, the MISP import and `check`. */
@Injectable()
export class WarninglistsService {
  constructor(
    private readonly repository: WarninglistsRepository,
    private readonly matcher: WarninglistMatcherService,
  ) {}

  async create(form: CreateWarninglistDto): Promise<WarninglistNameView> {
    const [record, entries] = this.recordOf(form.name, form);
    const id = await this.changing((manager) => this.repository.insert(manager, record, entries));
    if (id === undefined) throw WarninglistErrors.duplicate(form.name);
    return { name: form.name };
  }

  async list(): Promise<WarninglistView[]> {
    return (await this.repository.all()).map(toView);
  }

  async view(name: string): Promise<TaggedResult<WarninglistView>> {
    const row = await this.find(name);
    return new TaggedResult(toView(row), Number(row.revision));
  }

  async entries(name: string, query: EntriesQueryDto): Promise<PageResult<string>> {
    const page = pageRequestOf(query);
    const row = await this.find(name);
    const rows = await this.repository.entriesPage(row.id, afterIdFromCursor(page.cursor), page.limit + 1);
    return keysetPage(
      rows,
      page.limit,
      (entry) => afterIdCursor(entry.position),
      (entry) => entry.value,
    );
  }

  /**
   * PUT: the whole list again in the POST form (settings not given take their defaults; `name`, when sent,
   * must be the path's: a PUT does not rename); the body is checked before any lock. The entries are no
   * longer those of a MISP import, so its version and SHA-256 go (recordOf: null).
   */
  async replace(name: string, ifMatch: string, form: ReplaceWarninglistDto): Promise<void> {
    if (form.name !== undefined && form.name !== name) throw WarninglistErrors.nameNotPath(name, form.name);
    const [record, entries] = this.recordOf(name, form);
    await this.changing(async (manager) => {
      const row = await this.repository.byName(name, manager, true);
      if (!row) throw WarninglistErrors.notFound(name);
      assertTagMatches(ifMatch, Number(row.revision));
      await this.repository.update(manager, row.id, record, entries);
    });
  }

  /** PATCH: settings only; `{}` changes nothing and keeps the tag. */
  async update(name: string, ifMatch: string, form: UpdateWarninglistDto): Promise<void> {
    await this.changing(async (manager) => {
      const row = await this.repository.byName(name, manager, true);
      if (!row) throw WarninglistErrors.notFound(name);
      assertTagMatches(ifMatch, Number(row.revision));
      const kind = row.kind as ListKind;
      const record: ListRecord = {
        name,
        description: form.description ?? row.description,
        kind,
        keyTypes: form.keyTypes === undefined ? row.keyTypes : keyTypesOf(kind, form.keyTypes),
        action: form.action ?? row.action,
        enabled: form.enabled ?? row.enabled,
        version: row.version,
        sha256: row.sha256,
      };
      const same =
        record.description === row.description &&
        record.action === row.action &&
        record.enabled === row.enabled &&
        JSON.stringify(record.keyTypes) === JSON.stringify(row.keyTypes);
      if (!same) await this.repository.update(manager, row.id, record);
    });
  }

  async delete(name: string): Promise<void> {
    if (!(await this.changing((manager) => this.repository.delete(manager, name)))) throw WarninglistErrors.notFound(name);
  }

  /**
   * A MISP document: a new list (with the query's action and enabled), or the entries, kind, version and
   * description of the list of that name replaced, its other settings kept (keyTypes only while the kind
   * can still match them). Concurrent imports of one new name: the second waits on the name's index, finds
   * the first's list and replaces it.
   */
  async importMisp(body: unknown, query: ImportWarninglistQueryDto): Promise<WarninglistNameView> {
    const bytes = Buffer.isBuffer(body) ? body.toString('utf8') : '';
    let document: unknown;
    try {
      document = JSON.parse(bytes);
    } catch {
      throw WarninglistErrors.badDocument('the body is not valid JSON');
    }
    const misp = readMispDocument(document, bytes);
    const name = query.name ?? misp.name;
    const entries = normalizeEntries(misp.kind, misp.entries);
    const record: ListRecord = {
      name,
      description: misp.description,
      kind: misp.kind,
      keyTypes: misp.keyTypes,
      action: query.action ?? 'annotate',
      enabled: query.enabled !== 'false',
      version: misp.version,
      sha256: misp.sha256,
    };
    await this.changing(async (manager) => {
      if ((await this.repository.insert(manager, record, entries)) !== undefined) return;
      const row = (await this.repository.byName(name, manager, true))!;
      const kept = row.keyTypes?.every((type) => KIND_KEY_TYPES[misp.kind].includes(type as KeyType)) ? row.keyTypes : misp.keyTypes;
      await this.repository.update(manager, row.id, { ...record, keyTypes: kept, action: row.action, enabled: row.enabled }, entries);
    });
    return { name };
  }

  /** Each value typed (strings as the lookup types a bare value, refanged) and normalised, with its warnings from every enabled list. */
  async check(form: CheckDto): Promise<CheckResultView[]> {
    if (form.values.length > MAX_CHECK_VALUES) throw WarninglistErrors.tooManyValues(MAX_CHECK_VALUES);
    const keys = form.values.map((value, position) => keyOfCheckValue(value, position));
    const lists = await this.matcher.current();
    return keys.map(({ key, valid }) => ({ type: key.type, value: key.value, warnings: valid ? lists.warningsOf(key) : [] }));
  }

  /** A transaction that may change lists: the writes of every instance read them again once it commits (WarninglistMatcherService). */
  private async changing<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const result = await this.repository.transaction(async (manager) => {
      await this.matcher.announceChange(manager);
      return work(manager);
    });
    this.matcher.changed();
    return result;
  }

  private async find(name: string): Promise<ListRow> {
    const row = await this.repository.byName(name);
    if (!row) throw WarninglistErrors.notFound(name);
    return row;
  }

  private recordOf(name: string, form: WarninglistBodyDto): [ListRecord, string[]] {
    if (form.kind === 'regex') throw WarninglistErrors.unsupportedType(form.kind);
    const record: ListRecord = {
      name,
      description: form.description ?? '',
      kind: form.kind,
      keyTypes: keyTypesOf(form.kind, form.keyTypes),
      action: form.action ?? 'annotate',
      enabled: form.enabled ?? true,
      version: null,
      sha256: null,
    };
    return [record, normalizeEntries(form.kind, form.entries)];
  }
}

/** A value of `check`: a string (typed as a bare value) or `{type, value}`; 400 naming its position otherwise. */
function keyOfCheckValue(value: unknown, position: number): { key: ObjectKey; valid: boolean } {
  let key: ObjectKey;
  if (typeof value === 'string') {
    key = bareKey(value);
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { type, value: text, ...rest } = value as Record<string, unknown>;
    if (!KEY_TYPES.includes(type as KeyType)) throw WarninglistErrors.badValue(position, `type must be one of ${KEY_TYPES.join(', ')}`);
    if (typeof text !== 'string') throw WarninglistErrors.badValue(position, 'value must be a string');
    if (Object.keys(rest).length > 0) throw WarninglistErrors.badValue(position, 'only type and value are taken');
    key = { type: type as KeyType, value: refangValue(text) };
  } else {
    throw WarninglistErrors.badValue(position, 'a value is a string or {type, value}');
  }
  try {
    return { key: normalizeKey(key), valid: true };
  } catch {
    return { key, valid: false };
  }
}
