import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { Public } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { pingDatabase } from '../database/ping.js';
import { FilesService } from '../filebox/files.service.js';

export class HealthView {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly files: FilesService,
  ) {}

  @Get('live')
  @Public()
  @ApiOperation({
    summary: 'Liveness',
    description:
      'Answers 200 while the process serves HTTP, without touching the database: restart the instance when it ' + 'stops answering. Needs no credentials.',
  })
  @ApiOkResponse({ type: HealthView })
  live(): HealthView {
    return { status: 'ok' };
  }

  @Get('ready')
  @Public()
  @ApiOperation({
    summary: 'Readiness',
    description:
      'Answers 200 when the instance can serve requests (its database and its file storage answer), 503 otherwise: send traffic only ' +
      'to ready instances. Needs no credentials.',
  })
  @ApiOkResponse({ type: HealthView })
  @ApiErrors({ 503: 'ServiceUnavailable: the database or the file storage (FILEBOX_STORAGE) does not answer.' })
  async ready(): Promise<HealthView> {
    try {
      await pingDatabase(this.dataSource);
    } catch {
      throw new ApiError('ServiceUnavailable', 'the database is not reachable');
    }
    await this.files.checkStorage();
    return { status: 'ok' };
  }
}
