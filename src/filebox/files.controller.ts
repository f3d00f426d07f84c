import { Controller, Get, Head, Headers, HttpCode, Param, Put, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiPartialContentResponse,
  ApiPayloadTooLargeResponse,
  ApiRequestedRangeNotSatisfiableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import {
  FILE_CONTENT,
  FILE_UPLOAD_FORM,
  FileRefView,
  HEAD_CONTENT_HEADERS,
  RANGE_CONTENT_HEADERS,
  REPRESENTATION_HEADERS,
} from './dto/file.dto.js';
import { FilesService } from './files.service.js';

@ApiTags('filebox')
@Controller('filebox/files')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @Put()
  @HttpCode(201)
  @RequirePermission('filebox', 'Write')
  @ApiConsumes('multipart/form-data')
  @ApiBody(FILE_UPLOAD_FORM)
  @ApiCreatedResponse({ type: FileRefView })
  @ApiBadRequestResponse({ description: 'Not one file field `file` (InvalidData), an empty file (InvalidData), a broken body (BadRequest).' })
  @ApiPayloadTooLargeResponse({ description: 'RequestEntityTooLarge: larger than FILEBOX_MAX_FILE_BYTES; the body is not read further.' })
  upload(@Req() request: Request): Promise<FileRefView> {
    return this.files.upload(request);
  }

  // Declared before GET: Express would otherwise answer HEAD with the GET route.
  @Head(':fileID/content')
  @RequirePermission('filebox', 'Read')
  @ApiOkResponse({ description: 'No body; `Content-Length` is the file size.', headers: HEAD_CONTENT_HEADERS })
  @ApiNotFoundResponse({ description: 'Unknown or malformed file id.' })
  head(@Param('fileID') fileId: string, @Res() response: Response): Promise<void> {
    return this.files.head(fileId, response);
  }

  @Get(':fileID/content')
  @RequirePermission('filebox', 'Read')
  @ApiHeader({ name: 'Range', required: false, description: 'bytes=<start>-<end>, zero-based, inclusive.' })
  @ApiOkResponse({
    description: 'The whole file (no Range).',
    headers: { 'Content-Length': HEAD_CONTENT_HEADERS['Content-Length'], ...REPRESENTATION_HEADERS },
    content: FILE_CONTENT,
  })
  @ApiPartialContentResponse({ description: 'The range.', headers: RANGE_CONTENT_HEADERS, content: FILE_CONTENT })
  @ApiBadRequestResponse({ description: 'BadRequest: a malformed, inverted or multi-range `Range`.' })
  @ApiRequestedRangeNotSatisfiableResponse({
    description: 'RangeNotSatisfiable: the range starts past the end (or is `-0`).',
    headers: { 'Content-Range': { description: '`bytes */<total>`.', schema: { type: 'string' } } },
  })
  @ApiNotFoundResponse({ description: 'Unknown or malformed file id.' })
  download(
    @Param('fileID') fileId: string,
    @Headers('range') range: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    return this.files.download(fileId, range, response);
  }
}
