import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { SchemaRegistryModule } from '../schema-registry/schema-registry.module.js';
import { CollectionsController } from './collections.controller.js';
import { CollectionsService } from './collections.service.js';
import { CollectionEntity } from './entities/collection.entity.js';
import { SchemasController } from './schemas.controller.js';

@Module({
  // AuthModule for ResourcesService: every collection gets its own auth resource.
  imports: [TypeOrmModule.forFeature([CollectionEntity]), SchemaRegistryModule, AuthModule],
  controllers: [SchemasController, CollectionsController],
  providers: [CollectionsService],
})
export class IntelModule {}
