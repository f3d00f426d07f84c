import { applyDecorators, Body, Controller, HttpCode, Param, Post, Put, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { FileRefView } from './dto/file.dto.js';
import { CreateSessionDto, PART_UPLOAD_FORM, SessionRefView } from './dto/session.dto.js';
import { SessionsService } from './sessions.service.js';

/** Everything but the method of the part upload, which is served under PUT and POST alike. */
const PartUpload = () =>
  applyDecorators(
    HttpCode(204),
    RequirePermission('filebox', 'Write'),
    ApiOperation({
      summary: 'Upload a part',
      description:
        'Uploads part `number` (1, 2, ...) of a session as multipart fields `number`, `partSize` (the length of this ' +
        'part, as a decimal string) and `filePart` (its content). Every part but the last must be exactly the ' +
        "session's `partSize` bytes; the last may be shorter. Parts may arrive in any order and in parallel; " +
        'uploading a number again replaces that part, so a failed part is simply sent again. PUT and POST do the same.',
    }),
    ApiConsumes('multipart/form-data'),
    ApiBody(PART_UPLOAD_FORM),
    ApiNoContentResponse({ description: 'Stored.' }),
    ApiErrors({
      400: 'InvalidData: a field missing, repeated or unknown, a bad number, a filePart length other than its partSize. BadRequest: not multipart.',
      404: 'NotFound: no open session has this id (expired, or not a UUID).',
      413: 'RequestEntityTooLarge: the part would make the file larger than FILEBOX_MAX_FILE_BYTES.',
      422: 'InvalidState: the session is already completed.',
      507: 'InsufficientStorage: the file store is full; the part was not kept.',
    }),
  );

@ApiTags('filebox')
@Controller('filebox/sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @RequirePermission('filebox', 'Write')
  @ApiOperation({
    summary: 'Open an upload session',
    description:
      'Starts a resumable upload in parts of `partSize` bytes (1 MiB to 64 MiB; 5 MiB is usual). Upload the parts, ' +
      'then complete the session to get the file. A session left idle for `UPLOAD_SESSION_TTL_HOURS` is removed ' +
      'with its parts.',
  })
  @ApiCreatedResponse({ type: SessionRefView })
  @ApiErrors({ 400: 'InvalidData: partSize is not a whole number from 1 MiB to 64 MiB.' })
  create(@Body() form: CreateSessionDto): Promise<SessionRefView> {
    return this.sessions.create(form);
  }

  // The SDK uses PUT, the specification names POST: both are served (interface-spec §4.8 rule 1).
  @Put(':sessionID/parts')
  @PartUpload()
  putPart(@Param('sessionID') sessionId: string, @Req() request: Request): Promise<void> {
    return this.sessions.uploadPart(sessionId, request);
  }

  @Post(':sessionID/parts')
  @PartUpload()
  postPart(@Param('sessionID') sessionId: string, @Req() request: Request): Promise<void> {
    return this.sessions.uploadPart(sessionId, request);
  }

  @Post(':sessionID/completed')
  @RequirePermission('filebox', 'Write')
  @ApiOperation({
    summary: 'Complete an upload session',
    description:
      'Joins parts 1..N, in order, into one new file (digests computed on the way) and returns its id. Completing ' +
      'again returns the same id until the session expires, and concurrent completions make exactly one file.',
  })
  @ApiCreatedResponse({ type: FileRefView, description: 'The same file for a repeated completion.' })
  @ApiErrors({
    404: 'NotFound: no session has this id (expired, or not a UUID).',
    422: 'MissingFilePart: no parts, or a gap in 1..N. InvalidFilePart: a part but the last is not partSize bytes.',
    507: 'InsufficientStorage: the file store is full; the session and its parts stay as they were.',
  })
  complete(@Param('sessionID') sessionId: string): Promise<FileRefView> {
    return this.sessions.complete(sessionId);
  }
}
