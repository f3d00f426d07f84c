import { Injectable } from '@nestjs/common';
import { BUILTIN_RESOURCES, type Principal } from '../common/guard/access.js';
import { RegisterTaskDto, TASK_STATES, type TaskDetailView, type TaskState } from '../insight/dto/task.dto.js';
import { TasksService } from '../insight/tasks.service.js';
import type { FormAnswer } from './console-answers.js';
import { refusalOf, validatedForm } from './forms.js';
import { keyOfLine, linesOf } from './indicator-lines.js';
import { cursorParam, nextCursor } from './paging.js';
import type { Screen } from './views/layout.js';
import { registerTaskView, tasksView, taskView } from './views/tasks.view.js';

const PAGE_SIZE = '50';

/** The form fields that show the registration body's problems. */
const TASK_FIELDS = { 'params.schemaID': 'schemaID', 'params.objectKeys': 'objectKeys', 'params.fileID': 'fileID' };

/** Tasks through the insight area's service: newest first by state, one task, registration. */
@Injectable()
export class TasksScreen {
  constructor(private readonly tasks: TasksService) {}

  async list(principal: Principal, query: Record<string, unknown>): Promise<Screen> {
    const state = TASK_STATES.includes(query.state as TaskState) ? (query.state as TaskState) : undefined;
    const result = await this.tasks.list({ state, cursor: cursorParam(query), limit: PAGE_SIZE });
    return tasksView({
      tasks: result.items,
      state,
      canWrite: principal.holds(BUILTIN_RESOURCES.tasks, 'Write'),
      next: nextCursor(result),
    });
  }

  /** The task with its attempts (the API's `attempts=true`); NotFound for an unknown id, as the API. */
  async task(principal: Principal, id: string, message?: string): Promise<Screen> {
    const task = await this.tasks.view({ task_id: id }, 0, undefined, 'true');
    return taskView(task, { canWrite: principal.holds(BUILTIN_RESOURCES.tasks, 'Write'), message });
  }

  cancel(principal: Principal, id: string): Promise<FormAnswer> {
    return this.act(principal, id, (params) => this.tasks.cancel(params));
  }

  retry(principal: Principal, id: string): Promise<FormAnswer> {
    return this.act(principal, id, (params) => this.tasks.retry(params));
  }

  /**
   * Cancel or retry through the API's own service method: on to the task when it acted; refused (422
   * InvalidState: the task moved on since the page was drawn), the task again with the API's message.
   * An unknown task is NotFound when the screen reads it again.
   */
  private async act(principal: Principal, id: string, action: (params: { task_id: string }) => Promise<TaskDetailView>): Promise<FormAnswer> {
    try {
      const task = await action({ task_id: id });
      return { seeOther: `/console/tasks/${task.id}` };
    } catch (error) {
      const refusal = refusalOf(error, {});
      return { status: refusal.status, screen: await this.task(principal, id, refusal.message) };
    }
  }

  /** The form as the API's registration body, checked by the API's DTO and service. */
  async register(form: URLSearchParams): Promise<FormAnswer> {
    try {
      const { taskID } = await this.tasks.register(await validatedForm(RegisterTaskDto, taskBodyOf(form)));
      return { seeOther: `/console/tasks/${taskID}`, created: { taskID } };
    } catch (error) {
      const refusal = refusalOf(error, TASK_FIELDS);
      return { status: refusal.status, screen: registerTaskView({ form, refusal }) };
    }
  }
}

/** One key per non-empty line (defanged forms accepted, the type inferred); blank fields are left out. */
function taskBodyOf(form: URLSearchParams): object {
  const keys = linesOf(form.get('objectKeys') ?? '').map(keyOfLine);
  const fileID = form.get('fileID')?.trim();
  return {
    params: {
      schemaID: form.get('schemaID')?.trim() ?? '',
      ...(keys.length > 0 && { objectKeys: keys }),
      ...(fileID && { fileID }),
    },
  };
}
