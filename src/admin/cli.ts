import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { AdminKeysService } from '../auth/admin-keys.service.js';
import { ApiKeyRepository } from '../auth/api-key.repository.js';
import { loadConfigFromEnv, type AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { migrationStates, runMigrationsExclusively } from '../database/run-migrations.js';
import { openAdminDatabase } from '../startup/database-access.js';
import { failureReason } from '../startup/failure-reason.js';

/**
 * `npm run admin -- <command>`: operator commands on the service's database, wherever it is (see
 * openAdminDatabase). Results go to stdout; progress and errors to stderr, so the output can be captured.
 */

const USAGE = `usage: npm run admin -- <command>

commands:
  create-admin-key  create a new admin API key (every action on every top-level resource); the key is
                    printed once, alone on the last line of the output
  migrations        list every migration of this version, applied or pending
  migrate           apply the pending migrations

The database is DATABASE_URL when set, else the embedded PostgreSQL under DATA_DIR (default ./data): the
one the running service uses, or, when the service is stopped, started for the command and stopped after.
`;

const note = (message: string) => process.stderr.write(`${message}\n`);
const print = (line: string) => process.stdout.write(`${line}\n`);

const COMMANDS: Record<string, (dataSource: DataSource, config: AppConfig) => Promise<void>> = {
  'create-admin-key': async (dataSource, config) => {
    // A database the service never started on has no tables yet: bring it up to date as a start would.
    for (const name of await runMigrationsExclusively(dataSource)) note(`applied migration ${name}`);
    const { id, key } = await new AdminKeysService(dataSource, new ApiKeyRepository(config, dataSource)).create('admin (npm run admin -- create-admin-key)');
    note(`Created admin key ${id}. It is shown only this once:`);
    print(key);
  },
  migrations: async (dataSource) => {
    for (const { name, state } of await migrationStates(dataSource)) print(`${state.padEnd(8)} ${name}`);
  },
  migrate: async (dataSource) => {
    const applied = await runMigrationsExclusively(dataSource);
    for (const name of applied) print(`applied  ${name}`);
    if (applied.length === 0) print('no pending migrations');
  },
};

async function main(args: string[]): Promise<number> {
  if (args.length === 1 && ['help', '--help', '-h'].includes(args[0])) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.length !== 1 || !Object.hasOwn(COMMANDS, args[0])) {
    process.stderr.write(args.length === 0 ? USAGE : `unknown command: ${args.join(' ')}\n\n${USAGE}`);
    return 2;
  }
  const config = loadConfigFromEnv();
  const database = await openAdminDatabase(config, note);
  try {
    const dataSource = await new DataSource(dataSourceOptions(database.url, config.databasePoolSize)).initialize();
    try {
      note(`on ${database.description}`);
      await COMMANDS[args[0]](dataSource, config);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await database.close();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`admin: ${failureReason(error)}\n`);
    process.exit(1);
  },
);
