import { Module } from '@nestjs/common';
import { IntelModule } from '../intel/intel.module.js';
import { ReadPolicyModule } from '../read-policy/read-policy.module.js';
import { WarninglistsModule } from '../warninglists/warninglists.module.js';
import { StixBundleController } from './stix-bundle.controller.js';
import { StixImportService } from './stix-import.service.js';
import { TaxiiFallbackController } from './taxii-fallback.controller.js';
import { TaxiiFeedService } from './taxii-feed.service.js';
import { TaxiiObjectsController } from './taxii-objects.controller.js';
import { TaxiiServerController } from './taxii-server.controller.js';
import { TaxiiWritesService } from './taxii-writes.service.js';

/** TAXII 2.1 over the intel collections, and STIX bundle files into them, through intel's exported services only. */
@Module({
  imports: [IntelModule, ReadPolicyModule, WarninglistsModule],
  // The fallback last: it answers what the others do not route.
  controllers: [TaxiiServerController, TaxiiObjectsController, StixBundleController, TaxiiFallbackController],
  providers: [TaxiiFeedService, TaxiiWritesService, StixImportService],
})
export class TaxiiModule {}
