import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { SchemaIdParamDto } from '../schema-registry/dto/schema.dto.js';
import { QuotaDto, QuotaView } from './dto/quota.dto.js';
import { QuotasService } from './quotas.service.js';

@ApiTags('insight')
@Controller('insight/quotas')
export class QuotasController {
  constructor(private readonly quotas: QuotasService) {}

  @Put(':schema_id')
  @RequirePermission('insight', 'Write')
  @ApiOperation({
    summary: 'Set the quota of a result schema',
    description:
      'Take hands out tasks of the schema only while every window (the current UTC minute, hour and day) has hand-outs ' +
      'left and fewer than `maxLeased` of its tasks are leased, across all instances; the rest stay waiting, never ' +
      'failed for it. Give at least one limit; a limit left out is no limit. What the windows used is kept.',
  })
  @ApiOkResponse({ type: QuotaView })
  @ApiErrors({ 400: 'InvalidData: no limit, or one not a positive integer.', 422: 'SchemaNotFound: no such insight schema.' })
  put(@Param() params: SchemaIdParamDto, @Body() quota: QuotaDto) {
    return this.quotas.put(params, quota);
  }

  @Get(':schema_id')
  @RequirePermission('insight', 'Read')
  @ApiOperation({
    summary: 'Get the quota of a result schema',
    description: 'The limits, what each current window has handed out, the leased tasks, and when the next task can be handed out.',
  })
  @ApiOkResponse({ type: QuotaView })
  @ApiErrors({ 404: 'QuotaNotFound: the schema has no quota.' })
  get(@Param() params: SchemaIdParamDto) {
    return this.quotas.get(params);
  }

  @Delete(':schema_id')
  @HttpCode(204)
  @RequirePermission('insight', 'Write')
  @ApiOperation({
    summary: 'Remove the quota of a result schema',
    description: 'Its tasks are handed out without any limit again, by every instance from its next take on.',
  })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrors({ 404: 'QuotaNotFound: the schema has no quota.' })
  remove(@Param() params: SchemaIdParamDto) {
    return this.quotas.remove(params);
  }
}
