import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ListResourcesQueryDto, ResourceView } from './dto/resource.dto.js';
import { ResourcesService } from './resources.service.js';

@ApiTags('auth')
@Controller('auth/resources')
export class ResourcesController {
  constructor(private readonly resources: ResourcesService) {}

  @Get()
  @RequirePermission('auth', 'Read')
  @ApiOkResponse({ type: [ResourceView], description: 'A page; the next page is in `Link: rel="next"`.' })
  list(@Query() query: ListResourcesQueryDto) {
    return this.resources.list(query);
  }
}
