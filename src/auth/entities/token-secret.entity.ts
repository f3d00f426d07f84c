import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The token signing secret: in the database so that every instance signs and accepts the same tokens. */
@Entity('auth_token_secret')
export class TokenSecretEntity {
  @PrimaryColumn({ type: 'smallint' })
  id: number;

  @Column({ type: 'bytea' })
  secret: Buffer;
}
