import { Module } from '@nestjs/common';
import { AuditTrail } from './audit-trail.js';
import { AuditController } from './audit.controller.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

@Module({
  controllers: [AuditController],
  providers: [AuditRepository, AuditTrail, AuditService],
  // The application's global interceptor and exception filter (app.module.ts) record through AuditTrail.
  exports: [AuditTrail],
})
export class AuditModule {}
