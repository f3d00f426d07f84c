import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';

export const MIN_PART_SIZE = 1024 * 1024;
export const MAX_PART_SIZE = 64 * 1024 * 1024;

export class CreateSessionDto {
  @ApiProperty({ type: 'integer', minimum: MIN_PART_SIZE, maximum: MAX_PART_SIZE, example: 5242880 })
  @IsInt()
  @Min(MIN_PART_SIZE)
  @Max(MAX_PART_SIZE)
  partSize: number;
}

export class SessionRefView {
  @ApiProperty({ format: 'uuid' })
  sessionID: string;
}

/** OpenAPI description of the part form; all three fields may arrive as file parts (the SDK sends them so). */
export const PART_UPLOAD_FORM = {
  schema: {
    type: 'object',
    required: ['number', 'partSize', 'filePart'],
    properties: {
      number: { type: 'string', description: 'Part number, decimal, from 1.' },
      partSize: { type: 'string', description: "This part's byte length, decimal." },
      filePart: { type: 'string', format: 'binary' },
    },
  },
};
