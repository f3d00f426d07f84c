import { SightingSummariesModule } from '../sightings/sighting-summaries.module.js';
import { SourceClaimsModule } from '../sources/source-claims.module.js';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { BatchController } from './batch/batch.controller.js';
import { BatchRepository } from './batch/batch.repository.js';
import { BatchService } from './batch/batch.service.js';
import { SchemaRegistryModule } from '../schema-registry/schema-registry.module.js';
import { CollectionsController } from './collections.controller.js';
import { CollectionsService } from './collections.service.js';
import { ChangesService } from './changes.service.js';
import { ChangeSequencer } from './change-sequencer.js';
import { ExpiryService } from './expiry.service.js';
import { ExportController } from './export/export.controller.js';
import { ExportRepository } from './export/export.repository.js';
import { ExportService } from './export/export.service.js';
import { ChangeEntity } from './entities/change.entity.js';
import { CollectionEntity } from './entities/collection.entity.js';
import { ObjectKeyEntity } from './entities/object-key.entity.js';
import { ObjectEntity } from './entities/object.entity.js';
import { ImportController } from './import/import.controller.js';
import { ImportService } from './import/import.service.js';
import { LookupController } from './lookup/lookup.controller.js';
import { LookupService } from './lookup/lookup.service.js';
import { NetworkController } from './network/network.controller.js';
import { NetworkService } from './network/network.service.js';
import { ObjectsController } from './objects.controller.js';
import { ObjectsRepository } from './objects.repository.js';
import { ObjectExpiryRepository } from './object-expiry.repository.js';
import { ObjectFeedRepository } from './object-feed.repository.js';
import { ChangeRetentionRepository } from './change-retention.repository.js';
import { ObjectsService } from './objects.service.js';
import { SchemasController } from './schemas.controller.js';
import { ObjectVersionsService } from './object-versions.service.js';
import { WarninglistsModule } from '../warninglists/warninglists.module.js';
import { HistoryController } from './history/history.controller.js';
import { HistoryRepository } from './history/history.repository.js';
import { HistoryService } from './history/history.service.js';

@Module({
  // AuthModule for ResourcesService: every collection gets its own auth resource; WarninglistsModule for the
  // lists that annotate lookups and provenance, leave values out of exports and refuse writes;
  // SightingSummariesModule and SourceClaimsModule for provenance (neither imports intel: no cycle).
  imports: [TypeOrmModule.forFeature([CollectionEntity, ObjectEntity, ObjectKeyEntity, ChangeEntity]), SchemaRegistryModule, AuthModule, SightingSummariesModule, SourceClaimsModule, WarninglistsModule],
  controllers: [SchemasController, CollectionsController, ObjectsController, BatchController, LookupController, NetworkController, ExportController, ImportController, HistoryController],
  providers: [CollectionsService, ObjectVersionsService, ObjectsRepository, ObjectExpiryRepository, ObjectFeedRepository, ChangeRetentionRepository, ObjectsService, ChangeSequencer, ChangesService, BatchRepository, BatchService, LookupService, NetworkService, ExpiryService, ExportRepository, ExportService, ImportService, HistoryRepository, HistoryService],
  // For extensions (src/extensions/index.ts); BatchService and ObjectVersionsService for the standard feeds (taxii);
  // LookupService, ChangesService and HistoryService for the web console (src/console), which reads lookups, the feed and histories.
  exports: [CollectionsService, ObjectsService, BatchService, ObjectVersionsService, LookupService, ChangesService, HistoryService],
})
export class IntelModule {}
