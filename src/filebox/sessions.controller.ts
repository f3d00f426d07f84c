import { Body, Controller, HttpCode, Param, Post, Put, Req } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { FileRefView } from './dto/file.dto.js';
import { CreateSessionDto, PART_UPLOAD_FORM, SessionRefView } from './dto/session.dto.js';
import { SessionsService } from './sessions.service.js';

@ApiTags('filebox')
@Controller('filebox/sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @RequirePermission('filebox', 'Write')
  @ApiCreatedResponse({ type: SessionRefView })
  create(@Body() form: CreateSessionDto): Promise<SessionRefView> {
    return this.sessions.create(form);
  }

  // The SDK uses PUT, the specification names POST: both are served (interface-spec §4.8 rule 1).
  @Put(':sessionID/parts')
  @HttpCode(204)
  @RequirePermission('filebox', 'Write')
  @ApiConsumes('multipart/form-data')
  @ApiBody(PART_UPLOAD_FORM)
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'Unknown or malformed session id.' })
  putPart(@Param('sessionID') sessionId: string, @Req() request: Request): Promise<void> {
    return this.sessions.uploadPart(sessionId, request);
  }

  @Post(':sessionID/parts')
  @HttpCode(204)
  @RequirePermission('filebox', 'Write')
  @ApiConsumes('multipart/form-data')
  @ApiBody(PART_UPLOAD_FORM)
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'Unknown or malformed session id.' })
  postPart(@Param('sessionID') sessionId: string, @Req() request: Request): Promise<void> {
    return this.sessions.uploadPart(sessionId, request);
  }

  @Post(':sessionID/completed')
  @RequirePermission('filebox', 'Write')
  @ApiCreatedResponse({ type: FileRefView, description: 'The same file for a repeated completion.' })
  @ApiNotFoundResponse({ description: 'Unknown or malformed session id.' })
  complete(@Param('sessionID') sessionId: string): Promise<FileRefView> {
    return this.sessions.complete(sessionId);
  }
}
