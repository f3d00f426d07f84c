import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { ReadPolicyModule } from '../read-policy/read-policy.module.js';
import { SchemaRegistryModule } from '../schema-registry/schema-registry.module.js';
import { WarninglistsModule } from '../warninglists/warninglists.module.js';
import { BatchController } from './batch/batch.controller.js';
import { BatchRepository } from './batch/batch.repository.js';
import { BatchService } from './batch/batch.service.js';
import { ChangeRetentionRepository } from './change-retention.repository.js';
import { ChangeSequencer } from './change-sequencer.js';
import { ChangesService } from './changes.service.js';
import { CollectionsController } from './collections.controller.js';
import { CollectionsService } from './collections.service.js';
import { ChangeEntity } from './entities/change.entity.js';
import { CollectionEntity } from './entities/collection.entity.js';
import { ObjectKeyEntity } from './entities/object-key.entity.js';
import { ObjectEntity } from './entities/object.entity.js';
import { ExpiryService } from './expiry.service.js';
import { ImportController } from './import/import.controller.js';
import { ImportService } from './import/import.service.js';
import { ObjectExpiryRepository } from './object-expiry.repository.js';
import { ObjectFeedRepository } from './object-feed.repository.js';
import { ObjectVersionsService } from './object-versions.service.js';
import { ObjectsController } from './objects.controller.js';
import { ObjectsRepository } from './objects.repository.js';
import { ObjectsService } from './objects.service.js';
import { SchemasController } from './schemas.controller.js';

@Module({
  // AuthModule for ResourcesService: every collection gets its own auth resource; WarninglistsModule for the
  // lists that refuse writes; ReadPolicyModule for the listing's read policy. The other reads are IntelReadsModule's.
  imports: [
    TypeOrmModule.forFeature([CollectionEntity, ObjectEntity, ObjectKeyEntity, ChangeEntity]),
    SchemaRegistryModule,
    AuthModule,
    WarninglistsModule,
    ReadPolicyModule,
  ],
  controllers: [SchemasController, CollectionsController, ObjectsController, BatchController, ImportController],
  providers: [
    CollectionsService,
    ObjectVersionsService,
    ObjectsRepository,
    ObjectExpiryRepository,
    ObjectFeedRepository,
    ChangeRetentionRepository,
    ObjectsService,
    ChangeSequencer,
    ChangesService,
    BatchRepository,
    BatchService,
    ExpiryService,
    ImportService,
  ],
  // For extensions (src/extensions/index.ts); BatchService and ObjectVersionsService for the standard feeds (taxii);
  // ChangesService for the web console (src/console), which reads the feed; ChangeSequencer for IntelReadsModule's exports.
  exports: [CollectionsService, ObjectsService, BatchService, ObjectVersionsService, ChangesService, ChangeSequencer],
})
export class IntelModule {}
