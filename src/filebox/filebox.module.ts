import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FileEntity } from './entities/file.entity.js';
import { UploadPartEntity } from './entities/upload-part.entity.js';
import { UploadSessionEntity } from './entities/upload-session.entity.js';
import { FilesController } from './files.controller.js';
import { FilesService } from './files.service.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsService } from './sessions.service.js';
import { FILE_STORAGE } from './storage/file-storage.js';
import { LocalDiskStorage } from './storage/local-disk.storage.js';

@Module({
  imports: [TypeOrmModule.forFeature([FileEntity, UploadSessionEntity, UploadPartEntity])],
  controllers: [FilesController, SessionsController],
  // Another backend replaces the local disk by binding its own class to FILE_STORAGE.
  providers: [{ provide: FILE_STORAGE, useClass: LocalDiskStorage }, FilesService, SessionsService],
  // insight checks task file references through FilesService.exists.
  exports: [FilesService],
})
export class FileboxModule {}
