import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { FilesService } from '../filebox/files.service.js';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import { filesView, fileView } from './views/files.view.js';
import type { Screen } from './views/layout.js';

/** Files: upload (one file, streamed as the API's direct upload), a file's details, download. */
@ConsoleController('files')
export class FilesController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly files: FilesService,
  ) {}

  @Get()
  form(@Query() query: Record<string, unknown>): Screen {
    return filesView(typeof query.fileID === 'string' ? query.fileID : '');
  }

  @Post()
  @ConsoleAccess('filebox', 'Write')
  async upload(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const { fileID } = await this.files.upload(request as Request);
    await this.answers.seeOther(request, response, `/console/files/${fileID}`, { fileID });
  }

  /** The "open a file" form (a GET form cannot put the id in the path). */
  @Get('open')
  open(@Res() response: Response, @Query() query: Record<string, unknown>): void {
    const id = typeof query.fileID === 'string' ? query.fileID.trim() : '';
    response.redirect(303, `/console/files/${encodeURIComponent(id)}`);
  }

  @Get(':id')
  @ConsoleAccess('filebox', 'Read')
  async details(@Param('id') id: string): Promise<Screen> {
    return fileView(await this.files.describe(id.toLowerCase()));
  }

  @Get(':id/content')
  @ConsoleAccess('filebox', 'Read')
  download(@Param('id') id: string, @Res() response: Response): Promise<void> {
    return this.files.download(id.toLowerCase(), undefined, response);
  }
}
