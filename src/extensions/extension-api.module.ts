import { Global, Module, type DynamicModule } from '@nestjs/common';
import { FileboxModule } from '../filebox/filebox.module.js';
import { InsightModule } from '../insight/insight.module.js';
import { IntelModule } from '../intel/intel.module.js';
import { EXTENSION_SETTINGS, type ExtensionSettings } from './extension-loader.js';

/**
 * What an extension module may inject without importing anything: the services each area exports for
 * extensions (see index.ts), EXTENSION_SETTINGS, and DomainEvents (global already).
 */
@Global()
@Module({})
export class ExtensionApiModule {
  static forRoot(settings: ExtensionSettings): DynamicModule {
    return {
      module: ExtensionApiModule,
      imports: [IntelModule, InsightModule, FileboxModule],
      providers: [{ provide: EXTENSION_SETTINGS, useValue: settings }],
      exports: [IntelModule, InsightModule, FileboxModule, EXTENSION_SETTINGS],
    };
  }
}
