import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES } from '../common/guard/access.js';
import type { InsightKeyType } from '../common/indicators/index.js';
import { TASK_STATES, type TaskState } from '../insight/dto/task.dto.js';
import { type RegisterTaskDto, type TaskView, UUID_PATTERN } from '../insight/dto/task.dto.js';
import { TasksService } from '../insight/tasks.service.js';
import { SCHEMA_ID_PATTERN } from '../schema-registry/dto/schema.dto.js';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { cursorParam, nextCursor } from './paging.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import { html, type Html } from './html.js';
import { keyOfLine, linesOf } from './indicator-lines.js';
import { alertOf, page } from './views/layout.js';

const PAGE_SIZE = '50';

/** Tasks: newest first by state, one task's result or error, and registration. */
@ConsoleController('tasks')
export class TasksController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly tasks: TasksService,
  ) {}

  @Get()
  @ConsoleAccess('tasks', 'Read')
  async list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<Html> {
    const state = TASK_STATES.includes(query.state as TaskState) ? (query.state as TaskState) : undefined;
    const cursor = cursorParam(query);
    const result = await this.tasks.list({ state, cursor, limit: PAGE_SIZE });
    const next = nextCursor(result);
    const nextQuery = next && new URLSearchParams({ ...(state && { state }), cursor: next }).toString();
    return page(
      request,
      'Tasks',
      html`${request.principal!.holds(BUILTIN_RESOURCES.tasks, 'Write') && html`<p><a href="/console/tasks/new">Register a task</a></p>`}
<form method="get" action="/console/tasks" class="row">
<label for="state">State</label>
<select id="state" name="state"><option value="">Any</option>${TASK_STATES.map(
        (option) => html`<option${option === state ? html` selected` : ''}>${option}</option>`,
      )}</select>
<button type="submit">Show</button>
</form>
${
  result.items.length === 0
    ? html`<p>No tasks${state ? html` in state ${state}` : ''}.</p>`
    : html`<table><caption>Tasks, newest first</caption><thead><tr><th scope="col">Task</th><th scope="col">Schema</th><th scope="col">State</th><th scope="col">Subject</th></tr></thead>
<tbody>${result.items.map(
        (task) =>
          html`<tr><td><a class="mono" href="/console/tasks/${task.id}">${task.id}</a></td><td>${task.params.schemaID}</td><td>${task.state}</td><td>${subjectOf(task)}</td></tr>`,
      )}</tbody></table>`
}
${nextQuery && html`<p><a href="/console/tasks?${nextQuery}" rel="next">Next page</a></p>`}`,
    );
  }

  @Get('new')
  @ConsoleAccess('tasks', 'Write')
  form(@Req() request: ConsoleRequest): Html {
    return registerPage(request);
  }

  @Post()
  @ConsoleAccess('tasks', 'Write')
  async register(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const form = request.form!;
    let taskID: string;
    try {
      ({ taskID } = await this.tasks.register(taskFormOf(form)));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return this.answers.html(request, response, error.status, registerPage(request, form, error.message));
    }
    await this.answers.seeOther(request, response, `/console/tasks/${taskID}`, { taskID });
  }

  @Get(':id')
  @ConsoleAccess('tasks', 'Read')
  async view(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<Html> {
    const task = await this.tasks.view({ task_id: id });
    return page(
      request,
      `Task ${task.id}`,
      html`<dl>
<dt>State</dt><dd>${task.state}</dd>
<dt>Schema</dt><dd>${task.params.schemaID}</dd>
<dt>Subject</dt><dd>${subjectOf(task)}</dd>
</dl>
${task.result && html`<h2>Result</h2><pre>${JSON.stringify(task.result, null, 2)}</pre>`}
${task.error && html`<h2>Error</h2><p><strong>${task.error.code}</strong>: ${task.error.message}</p>`}
${task.state === 'Pending' && html`<p>Not finished yet. <a href="/console/tasks/${task.id}">Reload</a></p>`}
<p><a href="/console/tasks">All tasks</a></p>`,
    );
  }
}

function subjectOf(task: TaskView): Html {
  return html`${task.params.objectKeys?.map((key) => html`<span class="mono">${key.type} ${key.value}</span> `)}${
    task.params.fileID && html`file <a class="mono" href="/console/files/${task.params.fileID}">${task.params.fileID}</a>`
  }`;
}

/** The form as the API's registration body, checked as the API's DTO checks it. */
function taskFormOf(form: URLSearchParams): RegisterTaskDto {
  const schemaID = form.get('schemaID')?.trim() ?? '';
  if (!SCHEMA_ID_PATTERN.test(schemaID)) throw new ApiError('InvalidData', 'the schema must be a schema identifier');
  const fileID = form.get('fileID')?.trim() || undefined;
  if (fileID !== undefined && !UUID_PATTERN.test(fileID)) throw new ApiError('InvalidData', 'the file id must be a UUID');
  const keys = linesOf(form.get('objectKeys') ?? '').map(keyOfLine);
  if (keys.length > 64) throw new ApiError('InvalidData', 'at most 64 keys');
  if (keys.some((key) => key.type === 'IPNetwork')) throw new ApiError('InvalidData', 'a task cannot enrich an IP network');
  if (keys.length === 0 && fileID === undefined) throw new ApiError('InvalidData', 'give object keys, a file id, or both');
  return {
    params: {
      schemaID,
      ...(keys.length > 0 && { objectKeys: keys.map((key) => ({ type: key.type as InsightKeyType, value: key.value })) }),
      ...(fileID && { fileID }),
    },
  };
}

function registerPage(request: ConsoleRequest, form?: URLSearchParams, message?: string): Html {
  return page(
    request,
    'Register a task',
    html`${alertOf(message)}
<form method="post" action="/console/tasks" class="stack">
<label for="schemaID">Insight schema</label>
<input id="schemaID" name="schemaID" required maxlength="128" value="${form?.get('schemaID') ?? ''}">
<label for="objectKeys">Object keys (one per line: one key, or the hashes of one file)</label>
<textarea id="objectKeys" name="objectKeys" rows="4" spellcheck="false">${form?.get('objectKeys') ?? ''}</textarea>
<label for="fileID">File id (optional)</label>
<input id="fileID" name="fileID" maxlength="36" value="${form?.get('fileID') ?? ''}">
<p><button type="submit">Register task</button></p>
</form>`,
  );
}
