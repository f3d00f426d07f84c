import { Module } from '@nestjs/common';
import { FileboxModule } from '../filebox/filebox.module.js';
import { HealthController } from './health.controller.js';

@Module({ imports: [FileboxModule], controllers: [HealthController] })
export class HealthModule {}
