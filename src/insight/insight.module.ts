import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FileboxModule } from '../filebox/filebox.module.js';
import { SchemaRegistryModule } from '../schema-registry/schema-registry.module.js';
import { TaskEntity } from './entities/task.entity.js';
import { QuotasController } from './quotas.controller.js';
import { QuotasService } from './quotas.service.js';
import { InsightSchemasController } from './schemas.controller.js';
import { TaskAnnouncer } from './task-announcer.js';
import { TaskMetrics } from './task-metrics.js';
import { TaskQueueController } from './task-queue.controller.js';
import { TaskQueueService } from './task-queue.service.js';
import { TasksController } from './tasks.controller.js';
import { TasksRepository } from './tasks.repository.js';
import { TasksService } from './tasks.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([TaskEntity]), SchemaRegistryModule, FileboxModule],
  controllers: [InsightSchemasController, TasksController, TaskQueueController, QuotasController],
  providers: [TasksRepository, TaskAnnouncer, TasksService, TaskQueueService, TaskMetrics, QuotasService],
  // For extensions (src/extensions/index.ts).
  exports: [TasksService],
})
export class InsightModule {}
