import { applyDecorators, Body, Controller, HttpCode, Param, Post, Put, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { FileRefView } from './dto/file.dto.js';
import { CreateSessionDto, PART_UPLOAD_FORM, SessionRefView } from './dto/session.dto.js';
import { SessionsService } from './sessions.service.js';

/** Everything but the method of the part upload, which is served under PUT and POST alike. */
const PartUpload = () =>
  applyDecorators(
    HttpCode(204),
    RequirePermission('filebox', 'Write'),
    ApiConsumes('multipart/form-data'),
    ApiBody(PART_UPLOAD_FORM),
    ApiNoContentResponse(),
    ApiBadRequestResponse({
      description: 'InvalidData: a field missing, repeated or unknown, a bad number, a filePart length other than its partSize. BadRequest: not multipart.',
    }),
    ApiNotFoundResponse({ description: 'Unknown or malformed session id.' }),
    ApiPayloadTooLargeResponse({ description: 'RequestEntityTooLarge: the part would make the file larger than FILEBOX_MAX_FILE_BYTES.' }),
    ApiUnprocessableEntityResponse({ description: 'InvalidState: the session is already completed.' }),
  );

@ApiTags('filebox')
@Controller('filebox/sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @RequirePermission('filebox', 'Write')
  @ApiCreatedResponse({ type: SessionRefView })
  @ApiBadRequestResponse({ description: 'InvalidData: partSize is not a whole number from 1 MiB to 64 MiB.' })
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
  @ApiCreatedResponse({ type: FileRefView, description: 'The same file for a repeated completion.' })
  @ApiNotFoundResponse({ description: 'Unknown or malformed session id.' })
  @ApiUnprocessableEntityResponse({
    description: 'MissingFilePart: no parts, or a gap in 1..N. InvalidFilePart: a part but the last is not partSize bytes.',
  })
  complete(@Param('sessionID') sessionId: string): Promise<FileRefView> {
    return this.sessions.complete(sessionId);
  }
}
