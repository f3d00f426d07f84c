/**
 * Example extension: registers an enrichment task for every new object in chosen collections.
 *
 * Load it with the service's settings (see README.md beside this file):
 *   EXTENSIONS=examples/.build/auto-enrichment/auto-enrichment.module.js
 *   EXT_AUTO_ENRICHMENT_COLLECTIONS=phishing,malware   (collections to watch)
 *   EXT_AUTO_ENRICHMENT_SCHEMA=verdict                 (the insight schema the tasks ask for)
 */
import { Inject, Injectable, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { DomainEvents, EXTENSION_SETTINGS, TasksService, type ExtensionSettings, type ObjectChangedEvent } from 'intel-data-service/extensions';

/** Its own settings, checked when the service starts: a missing one stops the start with a clear message. */
function required(settings: ExtensionSettings, name: string): string {
  const value = settings[name]?.trim();
  if (!value) throw new Error(`auto-enrichment: ${name} is required`);
  return value;
}

@Injectable()
export class AutoEnrichment implements OnModuleInit {
  private readonly logger = new Logger('AutoEnrichment');
  private readonly collections: ReadonlySet<string>;
  private readonly schemaID: string;

  constructor(
    @Inject(EXTENSION_SETTINGS) settings: ExtensionSettings,
    private readonly events: DomainEvents,
    private readonly tasks: TasksService,
  ) {
    this.collections = new Set(
      required(settings, 'EXT_AUTO_ENRICHMENT_COLLECTIONS')
        .split(',')
        .map((name) => name.trim()),
    );
    this.schemaID = required(settings, 'EXT_AUTO_ENRICHMENT_SCHEMA');
  }

  onModuleInit(): void {
    // Delivered after the object's commit, on the instance that added it: one task per new object.
    this.events.on('intel.object.added', (event) => this.enrich(event));
  }

  /** A failure here is logged by DomainEvents; the add that caused it has already succeeded. */
  async enrich({ collection, object }: ObjectChangedEvent): Promise<void> {
    if (!this.collections.has(collection)) return;
    // Insight keys have no IPNetwork: a network cannot be enriched as a task object.
    const objectKeys = object.keys.filter((key): key is { type: Exclude<typeof key.type, 'IPNetwork'>; value: string } => key.type !== 'IPNetwork');
    if (objectKeys.length === 0) return;
    const { taskID } = await this.tasks.register({ params: { schemaID: this.schemaID, objectKeys } });
    this.logger.log(`task ${taskID} enriches ${objectKeys[0].type} ${objectKeys[0].value} of ${collection}`);
  }
}

@Module({ providers: [AutoEnrichment] })
export default class AutoEnrichmentModule {}
