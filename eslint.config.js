// Lint: the boundaries between the folders of src/ (CONTRIBUTING.md, "Lint and boundaries") and a few
// recommended TypeScript rules. Syntax only, no type information: it runs in seconds.
import { existsSync, readFileSync } from 'node:fs';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * The areas: folders of src/ that own a piece of the service. One reaches another only through what that
 * one exports (its module, services, DTOs, errors), never its tables (`entities/`), its queries
 * (`*.repository.ts`, `*-statements.ts`) or the folders listed in INTERNAL. Not areas: `common/` (shared by
 * all, knows none), `config/`, `database/`, the pure libraries `formats/` (parsers of the
 * feed formats) and `stix/` (the STIX 2.1 projection), which know none, and the places that wire areas
 * together: `app/` with `app.module.ts`, `main.ts`, `configure-app.ts`, and the admin CLI (`admin/`), which
 * builds its few services by hand outside Nest.
 */
const AREAS = [
  'audit',
  'auth',
  'console',
  'extensions',
  'filebox',
  'health',
  'insight',
  'intel',
  'read-policy',
  'schema-registry',
  'sightings',
  'sources',
  'startup',
  'taxii',
  'warninglists',
];

/** Folders inside an area that only the area itself imports, whatever their files' names. */
const INTERNAL = { filebox: ['storage'], console: ['views'], intel: ['export', 'network'] };

/**
 * An area shows other areas its module, services, DTOs and errors (`*.module.ts`, `*.service.ts`, `dto/`,
 * `*.dto.ts`, `*.errors.ts`) and keeps everything else to itself, whatever the file's name; the few other
 * files another area imports today are named here, each with why.
 */
const SHARED = {
  audit: { 'audit-trail.js': "AuditTrail is the audit area's provider that writes entries: the console records its refusals through it" },
  intel: { 'write-origin.js': 'WriteOrigin is the first parameter of every intel write: TAXII and sources build the one they pass' },
  'schema-registry': { 'schemas.controller.js': 'schemasControllerFor builds the schema routes that insight and intel each mount under their own path' },
  'read-policy': { 'read-policy.js': 'ReadPolicy is the first parameter of every reader of objects: the readers and the statements they build take it' },
  sightings: {
    'sighting-filter.js': "the read policy's sighting filters: their parsed form, which the policy holds",
    'sighting-sql.js': "the sightings' SQL that other statements embed: the read policy's conditions, the lookup's summaries, the export tag's version",
  },
  warninglists: {
    'warninglist-body.js': "the console's import form refuses a file above MAX_WARNINGLIST_BYTES as the import route does",
    'warninglist-matcher/index.js': "the matcher's list types and actions, and the ListSet the read policy reads once per request (the matcher folder's index)",
  },
};

/** Files that run SQL (`.query(`) although they are neither repositories nor statement modules, each with why. */
const RUNS_SQL = {
  // Plumbing.
  'src/common/sql/prepared-statement.ts': 'the runner of named prepared statements: runs the text a repository gives it',
  // Statements run inside a transaction or on a connection the service itself holds (a lock, a staged table):
  // the SQL and the steps around it are one argument, written in one place.
  'src/intel/batch/run-stage.ts': "a batch's temporary staging tables, created, filled and read inside its transaction",
  'src/intel/change-sequencer.ts': 'the sequencer\'s passes under its lock (CONTRIBUTING, "The change feed"): the lock and the numbering are one argument',
  'src/sightings/sighting-rollup.service.ts':
    'holds its session advisory lock on one connection for the roll-up (whileHoldingSessionLock in src/database would do: next)',
  // Left for a repository of their own (next): services whose reads are still inline.
  'src/insight/quotas.service.ts': 'quota rows: three short named statements (a QuotasRepository next)',
  'src/intel/collections.service.ts': 'collection rows and their cache (a CollectionsRepository next)',
  'src/taxii/taxii-writes.service.ts': 'TAXII status resources: written, read and pruned (a StatusRepository next)',
};

// The lists name only what is still true: a file that is gone, or runs no SQL any more, leaves its list.
const here = (path) => new URL(path, import.meta.url);
for (const file of Object.keys(RUNS_SQL)) {
  if (!existsSync(here(file)) || !/\.query\s*(?:<[^>]*>)?\(/.test(readFileSync(here(file), 'utf8'))) {
    throw new Error(`eslint.config.js: ${file} runs no SQL (any more): take it off RUNS_SQL`);
  }
}
for (const [area, files] of Object.entries(SHARED)) {
  for (const file of Object.keys(files)) {
    if (!existsSync(here(`src/${area}/${file.replace(/\.js$/, '.ts')}`))) throw new Error(`eslint.config.js: src/${area}/${file} is gone: take it off SHARED`);
  }
}

/** Every folder of src/ that `common/` and the pure libraries must not know. */
const DEPENDENTS = [...AREAS, 'admin', 'app'];

/** Matches a relative import that climbs out of its folder into one of `folders` (at any depth). */
const into = (folders) => `^(?:\\.\\./)+(?:${folders.join('|')})/`;

/** Escapes a file name for a regular expression. */
const literal = (name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What another area must not import from `area`: its INTERNAL folders and `entities/` whole, and anything
 * else that is neither its module, services, DTOs and errors nor named in SHARED (repositories, statement
 * modules and every other file it keeps to itself).
 */
const privateOf = (area) => {
  const shared = Object.keys(SHARED[area] ?? {}).map(literal);
  const open = [...(shared.length > 0 ? [`(?:${shared.join('|')})$`] : []), '(?:[^/]+/)*dto/', '(?:[^/]+/)*[^/]+\\.(?:module|service|errors|dto)\\.js$'];
  return `${area}/(?:${['entities', ...(INTERNAL[area] ?? [])].map((dir) => `${dir}/`).join('|')}|(?!${open.join('|')}))`;
};

const areaBoundary = (area) => ({
  files: [`src/${area}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(?:\\.\\./)+(?:${AREAS.filter((other) => other !== area)
              .map(privateOf)
              .join('|')})`,
            message:
              "Another area's tables, queries and internal files are its own: import its module, services, DTOs or errors (or name the file in SHARED with why).",
          },
        ],
      },
    ],
  },
});

export default defineConfig(
  { ignores: ['dist/', 'coverage/', 'data/', 'bench/.build/', 'examples/.build/', 'node_modules/'] },
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_name`: a parameter a signature needs (Express's error handler) or a field left out of a rest copy.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // class-validator and Nest type classes as `Function` (their metadata keys); the compiled validation reads them so.
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    // An area merges its error codes into common's table: `interface ErrorStatusTable extends ErrorCodesOf<typeof AUTH_ERROR_CODES> {}`.
    files: ['src/**/*.errors.ts', 'src/common/errors/api-error.ts'],
    rules: { '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }] },
  },
  ...AREAS.map(areaBoundary),
  {
    // Only repositories and statement modules run SQL (and the database's own plumbing); every other file
    // that does is named in RUNS_SQL with its reason.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.repository.ts', 'src/**/*-statements.ts', 'src/database/**', 'src/**/*.spec.ts', ...Object.keys(RUNS_SQL)],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.type='MemberExpression'][callee.property.name='query']",
          message:
            'SQL runs in a repository (`*.repository.ts`) or a statement module (`*-statements.ts`): move it there, or name the file in RUNS_SQL with its reason.',
        },
      ],
    },
  },
  {
    files: ['src/common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: into(DEPENDENTS), message: 'common/ is shared by every area and knows none of them.' }] }],
    },
  },
  {
    // The spec of the compiled validation checks the fast path against the real body DTOs of every area.
    files: ['src/common/validation/compiled-validation.spec.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['src/formats/**/*.ts', 'src/stix/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['typeorm', 'pg', 'express'].map((name) => ({ name, message: 'formats/ and stix/ are pure: no database, no HTTP.' })),
          patterns: [
            { group: ['@nestjs/*'], message: 'formats/ and stix/ are pure: no Nest.' },
            { regex: into([...DEPENDENTS, 'database', 'config']), message: 'formats/ and stix/ are pure: they know no area, database or settings.' },
          ],
        },
      ],
    },
  },
  {
    // An extension sees the service only through its public surface (src/extensions/index.ts).
    files: ['examples/**/*.ts'],
    // Its end-to-end test drives the whole service like any other test.
    ignores: ['examples/**/*.e2e-spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: into(['src', 'dist']), message: "Import the service's surface from 'intel-data-service/extensions'." }] },
      ],
    },
  },
);
