import { Global, Injectable, Logger, Module } from '@nestjs/common';
import type { ObjectKey, ObjectType } from '../indicators/indicators.js';

/** An indicator object as every view shows it. */
export interface ObjectEventView {
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  /** ISO 8601 UTC; absent when it never expires. */
  expiresAt?: string;
}

/** A change of an object, as the change feed records it. */
export interface ObjectChangedEvent {
  /** The collection's name. */
  collection: string;
  /** The object after the change; its last state for a removal. */
  object: ObjectEventView;
}

export interface TaskParamsEvent {
  schemaID: string;
  objectKeys?: ObjectKey[];
  fileID?: string;
}

/**
 * Every domain event, by name, with its payload. Delivered after the change committed, on the instance
 * that made it (each event once per deployment, not once per instance).
 */
export interface DomainEventMap {
  'intel.object.added': ObjectChangedEvent;
  'intel.object.updated': ObjectChangedEvent;
  /** `reason`: an explicit delete, the object's expiry, the end of its last claim (a source withdrew it), or its decayed score. */
  'intel.object.removed': ObjectChangedEvent & { reason: 'Deleted' | 'Expired' | 'Withdrawn' | 'Decayed' };
  'insight.task.registered': { taskID: string; params: TaskParamsEvent };
  /** `result` as stored (normalised keys). */
  'insight.task.completed': { taskID: string; result: { type: string; keys: ObjectKey[]; context: Record<string, unknown> } };
  /** By its executor, or `DeliveryLimitExceeded` when no executor reported within the allowed leases. */
  'insight.task.failed': { taskID: string; error: { code: string; message: string } };
  'filebox.file.stored': { fileID: string; name: string | null; size: number; sha256: string };
}

export type DomainEventName = keyof DomainEventMap;
export type DomainEventListener<Name extends DomainEventName> = (event: Readonly<DomainEventMap[Name]>) => void | Promise<void>;

/**
 * In-process domain events for extensions. Areas `emit` after their transaction committed, never inside
 * it; listeners subscribe with `on` (typically in `onModuleInit` of a provider that injects this
 * service). Each listener runs on a later turn of the event loop, so it neither delays nor fails the
 * request that caused the event: a listener that throws or rejects is logged and the others still run.
 */
@Injectable()
export class DomainEvents {
  private readonly logger = new Logger(DomainEvents.name);
  private readonly listeners = new Map<DomainEventName, Set<DomainEventListener<never>>>();

  /** Subscribes; returns the function that unsubscribes. */
  on<Name extends DomainEventName>(name: Name, listener: DomainEventListener<Name>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as DomainEventListener<never>);
    return () => set.delete(listener as DomainEventListener<never>);
  }

  /** Whether anyone listens: an emitter may skip building a costly payload. */
  has(name: DomainEventName): boolean {
    return (this.listeners.get(name)?.size ?? 0) > 0;
  }

  /** After the commit: delivers `event` to every listener of `name`, each on its own later turn. */
  emit<Name extends DomainEventName>(name: Name, event: DomainEventMap[Name]): void {
    const set = this.listeners.get(name);
    if (!set || set.size === 0) return;
    const frozen = Object.freeze(event);
    for (const listener of set) {
      setImmediate(() => {
        try {
          void Promise.resolve((listener as DomainEventListener<Name>)(frozen)).catch((error: unknown) => this.failed(name, error));
        } catch (error) {
          this.failed(name, error);
        }
      });
    }
  }

  private failed(name: DomainEventName, error: unknown): void {
    this.logger.error(`a listener of ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}

/** Global: every area emits, extensions listen. */
@Global()
@Module({ providers: [DomainEvents], exports: [DomainEvents] })
export class EventsModule {}
