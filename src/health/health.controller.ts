import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { Public } from '../common/guard/access.decorators.js';

export class HealthView {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  @Get('live')
  @Public()
  @ApiOkResponse({ type: HealthView })
  live(): HealthView {
    return { status: 'ok' };
  }

  @Get('ready')
  @Public()
  @ApiOkResponse({ type: HealthView })
  @ApiServiceUnavailableResponse({ description: 'The database does not answer.' })
  async ready(): Promise<HealthView> {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new ApiError('ServiceUnavailable', 'the database is not reachable');
    }
    return { status: 'ok' };
  }
}
