import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { BlobReferencesRepository } from './blob-references.repository.js';
import { FileEntity } from './entities/file.entity.js';
import { UploadPartEntity } from './entities/upload-part.entity.js';
import { UploadSessionEntity } from './entities/upload-session.entity.js';
import { FilesController } from './files.controller.js';
import { FilesRepository } from './files.repository.js';
import { FilesService } from './files.service.js';
import { SessionDigests } from './session-digests.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsService } from './sessions.service.js';
import { StorageSweepService } from './storage-sweep.service.js';
import { FILE_STORAGE, type FileStorage } from './storage/file-storage.js';
import { LocalDiskStorage } from './storage/local-disk.storage.js';
import { UploadSessionsRepository } from './upload-sessions.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([FileEntity, UploadSessionEntity, UploadPartEntity])],
  controllers: [FilesController, SessionsController],
  providers: [
    // FILEBOX_STORAGE (extensions §6) picks the backend. The AWS SDK is loaded only for S3: on local disk
    // its modules would be a few MB of heap that every instance keeps and never uses.
    {
      provide: FILE_STORAGE,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig): Promise<FileStorage> =>
        config.fileboxStorage.kind === 's3' ? new (await import('./storage/s3.storage.js')).S3Storage(config) : new LocalDiskStorage(config),
    },
    FilesRepository,
    FilesService,
    UploadSessionsRepository,
    SessionsService,
    SessionDigests,
    StorageSweepService,
    BlobReferencesRepository,
  ],
  // insight checks task file references through FilesService.exists; health asks it about the storage.
  exports: [FilesService],
})
export class FileboxModule {}
