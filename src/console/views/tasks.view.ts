import { TASK_STATES, type TaskDetailView, type TaskProgressView, type TaskState, type TaskView } from '../../insight/dto/task.dto.js';
import { html, type Html } from '../html.js';
import { alert, dataTable, dateOf, formField, pager, type SentForm } from './components.js';
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

export interface TaskActions {
  /** The signed-in key may cancel and retry tasks (Write on tasks, as the API's routes require). */
  canWrite?: boolean;
  /** Why a cancel or retry was refused, in the API's words. */
  message?: string;
}

/** One task: state, progress, result or error, every attempt, and the cancel or retry its state allows. */
export function taskView(task: TaskDetailView, { canWrite = false, message }: TaskActions = {}): Screen {
  return new Screen(
    `Task ${task.id}`,
    html`${alert(message)}<dl>
<dt>State</dt><dd>${task.state}${task.cancelRequested && ' (cancel requested: its executor is asked to stop)'}</dd>
<dt>Schema</dt><dd>${task.params.schemaID}</dd>
<dt>Subject</dt><dd>${subjectOf(task)}</dd>
${task.progress && html`<dt>Progress</dt><dd>${progressOf(task.progress)}</dd>`}
</dl>
${canWrite && taskActions(task)}
${task.result && html`<h2>Result</h2><pre>${JSON.stringify(task.result, null, 2)}</pre>`}
${task.error && html`<h2>Error</h2><p><strong>${task.error.code}</strong>: ${task.error.message}</p>`}
${task.state === 'Pending' && html`<p>Not finished yet. <a href="/console/tasks/${task.id}">Reload</a></p>`}
<h2>Attempts</h2>
${
  task.attempts?.length
    ? dataTable({
        caption: 'Attempts, oldest first',
        id: 'attempts',
        rows: task.attempts,
        columns: [
          { header: 'Attempt', cell: (attempt) => attempt.attempt },
          { header: 'Executor', cell: (attempt) => attempt.executor ?? '—' },
          { header: 'Key', cell: (attempt) => (attempt.keyID === null ? '—' : `key ${attempt.keyID}`) },
          { header: 'Taken', cell: (attempt) => dateOf(attempt.takenAt) },
          { header: 'Ended', cell: (attempt) => (attempt.endedAt === null ? 'running' : dateOf(attempt.endedAt)) },
          { header: 'Outcome', cell: (attempt) => attempt.outcome ?? 'running' },
          { header: 'Error', cell: (attempt) => (attempt.error ? `${attempt.error.code}: ${attempt.error.message}` : '—') },
        ],
      })
    : html`<p>No executor has taken it yet.</p>`
}
<p><a href="/console/tasks">All tasks</a></p>`,
  );
}

/** The last progress an executor reported by heartbeat. */
function progressOf({ percent, message }: TaskProgressView): Html {
  return html`<progress max="100" value="${percent}" aria-label="Progress"></progress> ${percent} %${message !== undefined && html` · ${message}`}`;
}

/**
 * The API's rules, offered where they can succeed: cancel while Pending (not once asked), retry once
 * Failed. A stale page may still post either; the service then refuses it as the API does.
 */
function taskActions(task: TaskDetailView): Html | '' {
  if (task.state === 'Pending' && !task.cancelRequested) return taskAction(task.id, 'cancel', 'Cancel task');
  if (task.state === 'Failed') return taskAction(task.id, 'retry', 'Retry task');
  return '';
}

function taskAction(id: string, action: 'cancel' | 'retry', label: string): Html {
  return html`<form method="post" action="/console/tasks/${id}/${action}"><button type="submit">${label}</button></form>`;
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
