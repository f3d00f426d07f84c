import { Controller, Get, Head, Headers, HttpCode, Param, Put, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiPartialContentResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { FILE_UPLOAD_FORM, FileRefView } from './dto/file.dto.js';
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
  upload(@Req() request: Request): Promise<FileRefView> {
    return this.files.upload(request);
  }

  // Declared before GET: Express would otherwise answer HEAD with the GET route.
  @Head(':fileID/content')
  @RequirePermission('filebox', 'Read')
  @ApiOkResponse({ description: 'No body; `Content-Length` is the file size.' })
  @ApiNotFoundResponse({ description: 'Unknown or malformed file id.' })
  head(@Param('fileID') fileId: string, @Res() response: Response): Promise<void> {
    return this.files.head(fileId, response);
  }

  @Get(':fileID/content')
  @RequirePermission('filebox', 'Read')
  @ApiHeader({ name: 'Range', required: false, description: 'bytes=<start>-<end>, zero-based, inclusive.' })
  @ApiOkResponse({ description: 'The whole file (no Range).' })
  @ApiPartialContentResponse({ description: 'The range; `Content-Range: bytes <start>-<end>/<total>`.' })
  @ApiNotFoundResponse({ description: 'Unknown or malformed file id.' })
  download(
    @Param('fileID') fileId: string,
    @Headers('range') range: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    return this.files.download(fileId, range, response);
  }
}
