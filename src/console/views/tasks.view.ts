import { TASK_STATES, type TaskState } from '../../insight/dto/task.dto.js';
import type { TaskView } from '../../insight/dto/task.dto.js';
import { html, type Html } from '../html.js';
import { alert, dataTable, formField, pager, type SentForm } from './components.js';
import { Screen } from './layout.js';

export interface TasksModel {
  tasks: TaskView[];
  /** The state filter, when one is chosen. */
  state?: TaskState;
  /** The signed-in key may register tasks. */
  canWrite: boolean;
  next?: string;
}

export function tasksView({ tasks, state, canWrite, next }: TasksModel): Screen {
  return new Screen(
    'Tasks',
    html`${canWrite && html`<p><a href="/console/tasks/new">Register a task</a></p>`}
<form method="get" action="/console/tasks" class="row">
<label for="state">State</label>
<select id="state" name="state"><option value="">Any</option>${TASK_STATES.map(
      (option) => html`<option${option === state ? html` selected` : ''}>${option}</option>`,
    )}</select>
<button type="submit">Show</button>
</form>
${
  tasks.length === 0
    ? html`<p>No tasks${state ? html` in state ${state}` : ''}.</p>`
    : dataTable({
        caption: 'Tasks, newest first',
        rows: tasks,
        columns: [
          { header: 'Task', cell: (task) => html`<a class="mono" href="/console/tasks/${task.id}">${task.id}</a>` },
          { header: 'Schema', cell: (task) => task.params.schemaID },
          { header: 'State', cell: (task) => task.state },
          { header: 'Subject', cell: subjectOf },
        ],
      })
}
${pager('/console/tasks', next, { state })}`,
  );
}

export function taskView(task: TaskView): Screen {
  return new Screen(
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

function subjectOf(task: TaskView): Html {
  return html`${task.params.objectKeys?.map((key) => html`<span class="mono">${key.type} ${key.value}</span> `)}${
    task.params.fileID && html`file <a class="mono" href="/console/files/${task.params.fileID}">${task.params.fileID}</a>`
  }`;
}

export function registerTaskView(sent: SentForm = {}): Screen {
  return new Screen(
    'Register a task',
    html`${alert(sent.refusal?.message)}
<form method="post" action="/console/tasks" class="stack">
${formField({ name: 'schemaID', label: 'Insight schema', attributes: html`required maxlength="128"` }, sent)}
${formField(
  {
    name: 'objectKeys',
    label: 'Object keys (one per line: one key, or the hashes of one file)',
    type: 'textarea',
    attributes: html`rows="4" spellcheck="false"`,
  },
  sent,
)}
${formField({ name: 'fileID', label: 'File id (optional)', attributes: html`maxlength="36"` }, sent)}
<p><button type="submit">Register task</button></p>
</form>`,
  );
}
