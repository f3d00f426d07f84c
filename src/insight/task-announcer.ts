import { Injectable } from '@nestjs/common';
import { DomainEvents } from '../common/events/domain-events.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import { LongPoll, type LongPollOptions } from '../database/long-poll.js';
import type { TaskParamsView } from './dto/task.dto.js';
import type { TaskResult } from './entities/task.entity.js';

/** The one key of the queue topic: executors wait for "a task may be takeable", not for a given task. */
const QUEUE_KEY = 'pending';

/**
 * What happens to tasks, after it committed: wakes the long-polls waiting for it on every instance and
 * emits the domain events. Every task write calls it after its statement, and only then.
 */
@Injectable()
export class TaskAnnouncer {
  /** Executors waiting for a takeable task. */
  private readonly queue: LongPoll;
  /** Readers waiting for a task to leave Pending, by task id. */
  private readonly tasks: LongPoll;

  constructor(
    bus: InvalidationBus,
    private readonly events: DomainEvents,
  ) {
    this.queue = new LongPoll(bus, 'task-queue');
    this.tasks = new LongPoll(bus, 'task');
  }

  /** Runs `check` (a take) again whenever a task may have become takeable, within the wait. */
  pollQueue<Result>(options: LongPollOptions<Result>, check: () => Promise<Result>): Promise<Result> {
    return this.queue.poll(QUEUE_KEY, options, check);
  }

  /** Runs `check` (a read of the task) again whenever the task may have finished, within the wait. */
  pollTask<Result>(id: string, options: LongPollOptions<Result>, check: () => Promise<Result>): Promise<Result> {
    return this.tasks.poll(id, options, check);
  }

  registered(taskID: string, params: TaskParamsView): void {
    this.queue.signal(QUEUE_KEY);
    this.events.emit('insight.task.registered', { taskID, params });
  }

  /** Back in the queue (a transient or rate-limited failure, a retry): takeable now or after its back-off. */
  requeued(): void {
    this.queue.signal(QUEUE_KEY);
  }

  completed(taskID: string, result: TaskResult): void {
    this.tasks.signal(taskID);
    this.events.emit('insight.task.completed', { taskID, result });
  }

  /** Failed by its executor, or at the delivery limit. */
  failed(taskID: string, error: { code: string; message: string }): void {
    this.tasks.signal(taskID);
    this.events.emit('insight.task.failed', { taskID, error });
  }
}
