import { ApiProperty } from '@nestjs/swagger';

export class TokenView {
  @ApiProperty()
  accessToken: string;

  @ApiProperty({ enum: ['Bearer'] })
  tokenType: 'Bearer';

  @ApiProperty({ type: 'integer', description: 'Seconds until the token expires.' })
  expiresIn: number;
}
