import { Controller, Get, Head, Headers, HttpCode, Param, Put, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiPartialContentResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { FILE_CONTENT, FILE_UPLOAD_FORM, FileRefView, HEAD_CONTENT_HEADERS, RANGE_CONTENT_HEADERS, REPRESENTATION_HEADERS } from './dto/file.dto.js';
import { FilesService } from './files.service.js';

@ApiTags('filebox')
@Controller('filebox/files')
export class FilesController {
  constructor(private readonly files: FilesService) {}

  @Put()
  @HttpCode(201)
  @RequirePermission('filebox', 'Write')
  @ApiConsumes('multipart/form-data')
  @ApiOperation({
    summary: 'Upload a file in one request',
    description:
      'Stores the content of the multipart field `file` (its file name is kept, last path segment only) and returns ' +
      "the new file's id. The content is streamed to storage, never held in memory; the service records its size " +
      'and MD5, SHA-1, SHA-256 and SHA-512 digests. Any size up to `FILEBOX_MAX_FILE_BYTES` (1 GiB by default) is ' +
      'accepted; for large files or unreliable links, upload in parts through a session instead.',
  })
  @ApiBody(FILE_UPLOAD_FORM)
  @ApiCreatedResponse({ type: FileRefView })
  @ApiErrors({
    400: 'InvalidData: not exactly one file field `file`, or an empty file. BadRequest: not a (complete) multipart body.',
    413: 'RequestEntityTooLarge: larger than FILEBOX_MAX_FILE_BYTES; the body is not read further.',
    507: 'InsufficientStorage: the file store is full; nothing of the upload was kept.',
  })
  upload(@Req() request: Request): Promise<FileRefView> {
    return this.files.upload(request);
  }

  // Declared before GET: Express would otherwise answer HEAD with the GET route.
  @Head(':fileID/content')
  @RequirePermission('filebox', 'Read')
  @ApiOperation({
    summary: "Get a file's size and digests",
    description:
      'Answers with the headers of a download and no body: `Content-Length` is the file size, `ETag` the quoted ' +
      'SHA-256 of the content, `Repr-Digest` its SHA-256 and SHA-512.',
  })
  @ApiOkResponse({ description: 'No body; `Content-Length` is the file size.', headers: HEAD_CONTENT_HEADERS })
  @ApiErrors({ 404: 'NotFound: no file has this id (or the id is not a UUID).' })
  head(@Param('fileID') fileId: string, @Res() response: Response): Promise<void> {
    return this.files.head(fileId, response);
  }

  @Get(':fileID/content')
  @RequirePermission('filebox', 'Read')
  @ApiOperation({
    summary: 'Download a file',
    description:
      'Streams the whole file (200), or with `Range: bytes=<start>-<end>` (zero-based, inclusive; also `<start>-` ' +
      'and `-<suffix length>`) that part of it (206, with `Content-Range: bytes <start>-<end>/<total>`). One range ' +
      'spans at most 50 MiB; an end past the file is clamped. To read a large file, request successive ranges ' +
      'until `Content-Range` shows the total is covered, and check it against `Repr-Digest`.',
  })
  @ApiHeader({ name: 'Range', required: false, description: 'bytes=<start>-<end>, zero-based, inclusive.' })
  @ApiOkResponse({
    description: 'The whole file (no Range).',
    headers: { 'Content-Length': HEAD_CONTENT_HEADERS['Content-Length'], ...REPRESENTATION_HEADERS },
    content: FILE_CONTENT,
  })
  @ApiPartialContentResponse({ description: 'The range.', headers: RANGE_CONTENT_HEADERS, content: FILE_CONTENT })
  @ApiErrors({
    400: 'BadRequest: a malformed, inverted or multi-range `Range`.',
    404: 'NotFound: no file has this id (or the id is not a UUID).',
    416: {
      description: 'RangeNotSatisfiable: the range starts past the end (or is `-0`).',
      headers: { 'Content-Range': { description: '`bytes */<total>`.', schema: { type: 'string' } } },
    },
  })
  download(@Param('fileID') fileId: string, @Headers('range') range: string | undefined, @Res() response: Response): Promise<void> {
    return this.files.download(fileId, range, response);
  }
}
