import { Module } from '@nestjs/common';
import { WarninglistsModule } from '../warninglists/warninglists.module.js';
import { ReadPolicies } from './read-policies.service.js';

/** The read policy (ReadPolicies), for every module that reads objects: intel's reads, TAXII, the console. */
@Module({
  imports: [WarninglistsModule],
  providers: [ReadPolicies],
  exports: [ReadPolicies],
})
export class ReadPolicyModule {}
