/**
 * The public surface for extension modules (see docs/extensions.md): import from here, and only from
 * here. Everything listed can be injected into an extension's providers.
 */
export {
  DomainEvents,
  type DomainEventListener,
  type DomainEventMap,
  type DomainEventName,
  type ObjectChangedEvent,
  type ObjectEventView,
  type TaskParamsEvent,
} from '../common/events/domain-events.js';
export { EXTENSION_SETTINGS, type ExtensionSettings } from './extension-loader.js';
/** Register enrichment tasks (`register`) and read them (`view`). */
export { TasksService } from '../insight/tasks.service.js';
/** Find collections (`findByName`, `view`). */
export { CollectionsService } from '../intel/collections.service.js';
/** Add, remove and list objects (`add`, `remove`, `list`), with the rules of the HTTP API. */
export { ObjectsService } from '../intel/objects.service.js';
/** Whether a file exists (`exists`). */
export { FilesService } from '../filebox/files.service.js';
