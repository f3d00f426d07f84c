import { ApiProperty } from '@nestjs/swagger';

export class FileRefView {
  @ApiProperty({ format: 'uuid' })
  fileID: string;
}

/** OpenAPI description of the direct upload form (the body is parsed by streaming, not by a DTO). */
export const FILE_UPLOAD_FORM = {
  schema: {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', format: 'binary', description: 'The file; its name is kept.' } },
  },
};
