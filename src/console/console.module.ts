import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { FileboxModule } from '../filebox/filebox.module.js';
import { InsightModule } from '../insight/insight.module.js';
import { IntelReadsModule } from '../intel/intel-reads.module.js';
import { IntelModule } from '../intel/intel.module.js';
import { ReadPolicyModule } from '../read-policy/read-policy.module.js';
import { ScoringModule } from '../scoring/scoring.module.js';
import { SightingsModule } from '../sightings/sightings.module.js';
import { SourcesModule } from '../sources/sources.module.js';
import { WarninglistsModule } from '../warninglists/warninglists.module.js';
import { AssetsController, ConsoleNotFoundController } from './assets.controller.js';
import { CollectionsController } from './collections.controller.js';
import { CollectionsScreen } from './collections.screen.js';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleSessionsRepository } from './console-sessions.repository.js';
import { ConsoleSessionsService } from './console-sessions.service.js';
import { ConsoleErrorFilter, ConsoleGuard, ConsoleHtmlInterceptor } from './console.guard.js';
import { FilesController } from './files.controller.js';
import { KeysController } from './keys.controller.js';
import { KeysScreen } from './keys.screen.js';
import { LookupController } from './lookup.controller.js';
import { LookupScreen } from './lookup.screen.js';
import { ResourceTree } from './resource-tree.js';
import { SessionController } from './session.controller.js';
import { SessionScreen } from './session.screen.js';
import { SourcesController } from './sources.controller.js';
import { SourcesScreen } from './sources.screen.js';
import { TasksController } from './tasks.controller.js';
import { TasksScreen } from './tasks.screen.js';
import { WarninglistsController } from './warninglists.controller.js';
import { WarninglistsScreen } from './warninglists.screen.js';

/**
 * The web console under /console (CONSOLE_ENABLED): server-rendered pages over the areas' exported
 * services, acting as the signed-in key, so every permission rule is the API's own.
 */
@Module({
  imports: [
    AuditModule,
    AuthModule,
    IntelModule,
    IntelReadsModule,
    ReadPolicyModule,
    ScoringModule,
    InsightModule,
    FileboxModule,
    SightingsModule,
    SourcesModule,
    WarninglistsModule,
  ],
  // The catch-all 404 last: Express matches routes in registration order.
  controllers: [
    SessionController,
    LookupController,
    CollectionsController,
    TasksController,
    FilesController,
    KeysController,
    SourcesController,
    WarninglistsController,
    AssetsController,
    ConsoleNotFoundController,
  ],
  providers: [
    ConsoleAnswers,
    ConsoleSessionsRepository,
    ConsoleSessionsService,
    ConsoleGuard,
    ConsoleErrorFilter,
    ConsoleHtmlInterceptor,
    ResourceTree,
    // One per screen: reads through the areas' exported services and maps them to the screen's view model.
    SessionScreen,
    LookupScreen,
    CollectionsScreen,
    TasksScreen,
    KeysScreen,
    SourcesScreen,
    WarninglistsScreen,
  ],
})
export class ConsoleModule {}
