import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The one row of `auth_token_secret`: the key every instance signs and checks bearer tokens with. */
@Injectable()
export class TokenSecretRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The secret, written first as `candidate` when there is none yet (the first instance to start creates it). */
  async readOrCreate(candidate: Buffer): Promise<Buffer> {
    await this.dataSource.query(`INSERT INTO auth_token_secret (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [candidate]);
    const [{ secret }]: { secret: Buffer }[] = await this.dataSource.query(`SELECT secret FROM auth_token_secret WHERE id = 1`);
    return secret;
  }
}
