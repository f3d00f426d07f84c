import { Module } from '@nestjs/common';
import { ReadPolicyModule } from '../read-policy/read-policy.module.js';
import { SightingSummariesModule } from '../sightings/sighting-summaries.module.js';
import { SourceClaimsModule } from '../sources/source-claims.module.js';
import { ExportController } from './export/export.controller.js';
import { ExportRepository } from './export/export.repository.js';
import { ExportService } from './export/export.service.js';
import { HistoryController } from './history/history.controller.js';
import { HistoryRepository } from './history/history.repository.js';
import { HistoryService } from './history/history.service.js';
import { IntelModule } from './intel.module.js';
import { LookupController } from './lookup/lookup.controller.js';
import { LookupRepository } from './lookup/lookup.repository.js';
import { LookupService } from './lookup/lookup.service.js';
import { NetworkController } from './network/network.controller.js';
import { NetworkRepository } from './network/network.repository.js';
import { NetworkService } from './network/network.service.js';

/**
 * Intel's read side beyond the listing: exports, lookups, network search, history and provenance. Every read
 * takes the request's ReadPolicy (ReadPolicyModule); IntelModule gives the collections, the feed and the
 * sequencer. SightingSummariesModule and SourceClaimsModule for provenance (neither imports intel: no cycle).
 */
@Module({
  imports: [IntelModule, ReadPolicyModule, SightingSummariesModule, SourceClaimsModule],
  controllers: [LookupController, NetworkController, ExportController, HistoryController],
  providers: [LookupRepository, LookupService, NetworkRepository, NetworkService, ExportRepository, ExportService, HistoryRepository, HistoryService],
  // LookupService for sightings (keys a caller may look up) and the web console; HistoryService for the console.
  exports: [LookupService, HistoryService],
})
export class IntelReadsModule {}
