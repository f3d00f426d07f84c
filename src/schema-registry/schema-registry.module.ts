import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SchemaEntity } from './entities/schema.entity.js';
import { SchemaRegistryService } from './schema-registry.service.js';
import { SchemasRepository } from './schemas.repository.js';

/** The schema registry of intel and insight; each area's controller calls it with its own namespace. */
@Module({
  imports: [TypeOrmModule.forFeature([SchemaEntity])],
  providers: [SchemasRepository, SchemaRegistryService],
  exports: [SchemaRegistryService],
})
export class SchemaRegistryModule {}
