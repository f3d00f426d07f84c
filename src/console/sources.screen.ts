import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES, type Principal } from '../common/guard/access.js';
import type { SourceView } from '../sources/dto/source.dto.js';
import { SourceRunsService } from '../sources/source-runs.service.js';
import { SourcesService } from '../sources/sources.service.js';
import type { FormAnswer } from './console-answers.js';
import { refusalOf, type Refusal } from './forms.js';
import { cursorParam, nextCursor } from './paging.js';
import type { Screen } from './views/layout.js';
import { sourceEditorView, sourceHref, sourcesView, sourceView } from './views/sources.view.js';

const PAGE_SIZE = '50';

/** The form fields that show the refusal of a source member (`details.field`); any other member's field has its name. */
const SOURCE_FIELDS: Record<string, string> = { 'removal.policy': 'removal', 'removal.runs': 'removalRuns' };

/** Sources through the sources area's services: the readable sources, one source's run log, "Run now", the source form. */
@Injectable()
export class SourcesScreen {
  constructor(
    private readonly sources: SourcesService,
    private readonly runs: SourceRunsService,
  ) {}

  async list(principal: Principal, query: Record<string, unknown>): Promise<Screen> {
    const cursor = cursorParam(query);
    const result = await this.sources.list(principal, { cursor, limit: PAGE_SIZE });
    return sourcesView({ sources: result.items, canRun: canRun(principal), paged: cursor !== undefined, next: nextCursor(result), now: Date.now() });
  }

  async source(principal: Principal, name: string, query: Record<string, unknown>, message?: string): Promise<Screen> {
    const cursor = cursorParam(query);
    const { body } = await this.sources.view(name);
    const runs = await this.sources.runs(name, { cursor, limit: PAGE_SIZE });
    return sourceView({
      source: body,
      runs: runs.items,
      canRun: canRun(principal),
      paged: cursor !== undefined,
      next: nextCursor(runs),
      message,
      now: Date.now(),
    });
  }

  /** The form of a source, filled with its stored members. */
  async editor(name: string): Promise<Screen> {
    const { body, version } = await this.sources.view(name);
    return sourceEditorView({ name, version, form: fieldsOf(body) });
  }

  /**
   * The source form posted: "Test" answers it again with what a run of it would do now (a dry run, nothing
   * stored); "Save" creates the source (`POST /intel/sources`) or changes `name` (`PATCH`, If-Match the
   * version the form was read at), then goes to its page. A refused form comes back with the problem.
   */
  async submit(form: URLSearchParams, name?: string): Promise<FormAnswer> {
    const body = bodyOf(form, name !== undefined);
    const version = name === undefined ? undefined : Number(form.get('version'));
    const again = (extra: { status: number; refusal?: Refusal; preview?: Awaited<ReturnType<SourceRunsService['testForm']>> }): FormAnswer => ({
      status: extra.status,
      screen: sourceEditorView({ name, version, form, refusal: extra.refusal, preview: extra.preview }),
    });
    try {
      if (form.get('action') === 'test') return again({ status: 200, preview: await this.runs.testForm(body, name) });
      if (name === undefined) {
        const created = await this.sources.create(body);
        return { seeOther: sourceHref(created.name), created };
      }
      await this.sources.update(name, `"${version}"`, body);
      return { seeOther: sourceHref(name) };
    } catch (error) {
      return again({ status: (error as { status?: number }).status ?? 500, refusal: sourceRefusal(error) });
    }
  }

  /** A run now, as `POST /intel/sources/{name}/runs`; while one runs, the source's page says so (409). */
  async runNow(principal: Principal, name: string): Promise<FormAnswer> {
    try {
      const { runID } = await this.runs.start(name, principal.keyId);
      return { seeOther: sourceHref(name), created: { runID } };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'RunInProgress') throw error;
      return { status: error.status, screen: await this.source(principal, name, {}, error.message) };
    }
  }
}

function canRun(principal: Principal): boolean {
  return principal.holds(BUILTIN_RESOURCES.intel, 'Write');
}

/** The refusal of a source form: the API's message, under the field of the member it names (`details.field`). */
function sourceRefusal(error: unknown): Refusal {
  const refusal = refusalOf(error, {});
  const member = (error as ApiError).details?.field;
  if (typeof member !== 'string') return refusal;
  const field = SOURCE_FIELDS[member] ?? member.split('.')[0];
  return { ...refusal, message: 'The form was not accepted: see the marked field.', fields: { [field]: (error as ApiError).message } };
}

/** A source's members as the form's fields (numbers as text, the removal policy split in two). */
function fieldsOf(source: SourceView): URLSearchParams {
  const fields = new URLSearchParams({
    kind: source.kind,
    url: source.url,
    intervalSeconds: String(source.intervalSeconds),
    reliability: source.reliability,
    credibility: String(source.credibility),
    removal: source.removal.policy,
    tlp: source.tlp,
  });
  const optional = {
    removalRuns: source.removal.runs,
    valueColumn: source.valueColumn,
    valueField: source.valueField,
    collectionID: source.collectionID,
    credibilityField: source.credibilityField,
    credibilityScale: source.credibilityScale,
  };
  for (const [name, value] of Object.entries(optional)) if (value !== undefined) fields.set(name, String(value));
  return fields;
}

/** Kinds whose records may give their own credibility (a `credibilityField`). */
const RECORD_CREDIBILITY_KINDS = ['csv', 'ndjson'];

/**
 * The form's fields in the shape of the source API's body; blank fields are left out (an edit keeps those
 * members), except a cleared credibility field of an edit, which clears it (`null`). Only reshaping: the
 * API's rules check the values (a number field that is no number goes as text and is refused as such).
 */
function bodyOf(form: URLSearchParams, editing: boolean): Record<string, unknown> {
  const text = (name: string) => form.get(name)?.trim() || undefined;
  const number = (name: string) => {
    const value = text(name);
    return value !== undefined && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  };
  const kind = text('kind');
  const policy = text('removal');
  const credibilityField = text('credibilityField');
  const members: Record<string, unknown> = {
    ...(!editing && { name: text('name'), collection: text('collection') }),
    kind,
    url: text('url'),
    intervalSeconds: number('intervalSeconds'),
    reliability: text('reliability'),
    credibility: number('credibility'),
    removal: policy === undefined ? undefined : { policy, ...(policy === 'afterMissedRuns' && { runs: number('removalRuns') }) },
    tlp: text('tlp'),
    valueColumn: text('valueColumn'),
    valueField: text('valueField'),
    collectionID: text('collectionID'),
    credibilityField: credibilityField ?? (editing && RECORD_CREDIBILITY_KINDS.includes(kind ?? '') ? null : undefined),
    credibilityScale: credibilityField === undefined ? undefined : text('credibilityScale'),
  };
  return Object.fromEntries(Object.entries(members).filter(([, value]) => value !== undefined));
}
