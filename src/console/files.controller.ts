import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { FilesService } from '../filebox/files.service.js';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import { html, type Html } from './html.js';
import { page } from './views/layout.js';

/** Files: upload (one file, streamed as the API's direct upload), a file's details, download. */
@ConsoleController('files')
export class FilesController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly files: FilesService,
  ) {}

  @Get()
  form(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Html {
    return page(
      request,
      'Files',
      html`<h2>Upload</h2>
<form method="post" action="/console/files" enctype="multipart/form-data" class="stack" hx-encoding="multipart/form-data">
<label for="file">File</label>
<input id="file" name="file" type="file" required>
<p><button type="submit">Upload</button></p>
<progress id="upload-progress" max="100" value="0" hidden aria-label="Upload progress"></progress>
</form>
<h2>Open a file</h2>
<form method="get" action="/console/files/open" class="row">
<label for="fileID">File id</label>
<input id="fileID" name="fileID" maxlength="36" required value="${typeof query.fileID === 'string' ? query.fileID : ''}">
<button type="submit">Open</button>
</form>`,
    );
  }

  @Post()
  @ConsoleAccess('filebox', 'Write')
  async upload(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    const { fileID } = await this.files.upload(request as Request);
    await this.answers.seeOther(request, response, `/console/files/${fileID}`, { fileID });
  }

  /** The "open a file" form (a GET form cannot put the id in the path). */
  @Get('open')
  open(@Req() request: ConsoleRequest, @Res() response: Response, @Query() query: Record<string, unknown>): void {
    const id = typeof query.fileID === 'string' ? query.fileID.trim() : '';
    response.redirect(303, `/console/files/${encodeURIComponent(id)}`);
  }

  @Get(':id')
  @ConsoleAccess('filebox', 'Read')
  async details(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<Html> {
    const file = await this.files.describe(id.toLowerCase());
    return page(
      request,
      'File',
      html`<dl>
<dt>Id</dt><dd class="mono">${file.fileID}</dd>
<dt>Name</dt><dd>${file.name ?? '(none)'}</dd>
<dt>Size</dt><dd>${file.size.toLocaleString('en')} bytes</dd>
<dt>SHA-256</dt><dd class="mono">${file.sha256}</dd>
</dl>
<p><a href="/console/files/${file.fileID}/content" hx-boost="false" download>Download</a></p>`,
    );
  }

  @Get(':id/content')
  @ConsoleAccess('filebox', 'Read')
  download(@Param('id') id: string, @Res() response: Response): Promise<void> {
    return this.files.download(id.toLowerCase(), undefined, response);
  }
}
