import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WarninglistEntryEntity } from './entities/warninglist-entry.entity.js';
import { WarninglistEntity } from './entities/warninglist.entity.js';
import { WarninglistMatcherService } from './warninglist-matcher.service.js';
import { WarninglistsController } from './warninglists.controller.js';
import { WarninglistsRepository } from './warninglists.repository.js';
import { WarninglistsService } from './warninglists.service.js';

/**
 * Warninglists (extensions §15). Imports no other area: the intel area (lookups, exports, writes) and TAXII
 * use it through WarninglistMatcherService, so no module cycle can form; the console manages lists through
 * WarninglistsService.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WarninglistEntity, WarninglistEntryEntity])],
  controllers: [WarninglistsController],
  providers: [WarninglistsRepository, WarninglistsService, WarninglistMatcherService],
  exports: [WarninglistMatcherService, WarninglistsService],
})
export class WarninglistsModule {}
