import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { CommonErrors } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES, type Principal } from '../common/guard/access.js';
import { readMultipart, readValue } from '../common/http/multipart.js';
import { formatTag } from '../common/tags/tag.js';
import { ImportWarninglistQueryDto, UpdateWarninglistDto } from '../warninglists/dto/warninglist.dto.js';
import { MAX_WARNINGLIST_BYTES } from '../warninglists/warninglist-body.js';
import { WarninglistsService } from '../warninglists/warninglists.service.js';
import type { FormAnswer } from './console-answers.js';
import { refusalOf, validatedForm } from './forms.js';
import { cursorParam, nextCursor } from './paging.js';
import type { SentForm } from './views/components.js';
import type { Screen } from './views/layout.js';
import { warninglistHref, warninglistsView, warninglistView } from './views/warninglists.view.js';

const PAGE_SIZE = '100';

/** The import form: the file and the settings a new list gets (as the import route's query). */
const IMPORT_FIELDS = ['name', 'action', 'enabled'];
const IMPORT_PARTS = IMPORT_FIELDS.length + 1;
const FIELD_BYTES = 1024;

/** Warninglists through the warninglists area's service: every list, one list's entries, settings, the MISP import. */
@Injectable()
export class WarninglistsScreen {
  constructor(private readonly lists: WarninglistsService) {}

  async list(principal: Principal, sent: SentForm = {}): Promise<Screen> {
    return warninglistsView({ lists: await this.lists.list(), canWrite: canWrite(principal), ...sent });
  }

  async warninglist(principal: Principal, name: string, query: Record<string, unknown>): Promise<Screen> {
    const cursor = cursorParam(query);
    const { body } = await this.lists.view(name);
    const entries = await this.lists.entries(name, { cursor, limit: PAGE_SIZE });
    return warninglistView({ list: body, entries: entries.items, canWrite: canWrite(principal), paged: cursor !== undefined, next: nextCursor(entries) });
  }

  /**
   * `enabled` or `action` as `PATCH /intel/warninglists/{name}`, by its DTO. The tag is the list's as read
   * here: the form sets one member to a value the person chose, so no other change can be lost by it.
   */
  async update(name: string, form: URLSearchParams): Promise<FormAnswer> {
    const changes = await validatedForm(UpdateWarninglistDto, settingsOf(form));
    const { version } = await this.lists.view(name);
    await this.lists.update(name, formatTag(version), changes);
    return { seeOther: form.get('back') === 'lists' ? '/console/warninglists' : warninglistHref(name) };
  }

  /** A MISP file from a multipart form, as `POST /intel/warninglists/import` takes it; a refusal shows the form again. */
  async importMisp(principal: Principal, request: Request): Promise<FormAnswer> {
    const fields = new URLSearchParams();
    let document: Buffer = Buffer.alloc(0);
    try {
      await readMultipart(request, IMPORT_PARTS, async (part) => {
        if (part.isFile && part.name === 'file') document = await fileOf(part.content);
        else if (part.name !== undefined && IMPORT_FIELDS.includes(part.name)) fields.set(part.name, await readValue(part, FIELD_BYTES));
        else part.content.resume();
      });
      const query = await validatedForm(ImportWarninglistQueryDto, importQueryOf(fields));
      const { name } = await this.lists.importMisp(document, query);
      return { seeOther: warninglistHref(name), created: { name } };
    } catch (error) {
      // Only the name is typed in; the action and the box cannot be wrong from this form, so their problems go to the message.
      const refusal = refusalOf(error, { name: 'name' });
      return { status: refusal.status, screen: await this.list(principal, { form: fields, refusal }) };
    }
  }
}

function canWrite(principal: Principal): boolean {
  return principal.holds(BUILTIN_RESOURCES.intel, 'Write');
}

/** `enabled` as the boolean the DTO checks (any other text is passed on for it to refuse); blank fields left out. */
function settingsOf(form: URLSearchParams): object {
  const enabled = form.get('enabled');
  const action = form.get('action');
  return {
    ...(enabled !== null && { enabled: enabled === 'true' ? true : enabled === 'false' ? false : enabled }),
    ...(action !== null && { action }),
  };
}

/** The import's query: an unchecked "Enabled" box sends nothing, which means `false`; a blank name is the default. */
function importQueryOf(fields: URLSearchParams): object {
  const name = fields.get('name')?.trim();
  return {
    ...(name && { name }),
    action: fields.get('action') ?? 'annotate',
    enabled: fields.get('enabled') ?? 'false',
  };
}

/** The file's bytes (its SHA-256 is of the bytes as sent), at most MAX_WARNINGLIST_BYTES, as the API's route reads them. */
async function fileOf(content: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of content) {
    length += chunk.length;
    if (length > MAX_WARNINGLIST_BYTES) throw CommonErrors.tooLarge(`a warninglist file may be at most ${MAX_WARNINGLIST_BYTES / 1024 / 1024} MiB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
