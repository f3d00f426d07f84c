// Jest runs in native ESM mode (node --experimental-vm-modules): NestJS 12 ships ES modules only,
// and Jest (whatever the Node version) cannot require() them from CommonJS.
export default {
  testEnvironment: 'node',
  rootDir: '.',
  testMatch: ['<rootDir>/test/**/*.e2e-spec.ts', '<rootDir>/src/**/*.spec.ts', '<rootDir>/examples/**/*.e2e-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  // The extensions' import of the service's public surface resolves to its source under test.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', '^intel-data-service/extensions$': '<rootDir>/src/extensions/index.ts' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testSequencer: '<rootDir>/test/support/slow-first-sequencer.js',
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  testTimeout: 60000,
  maxWorkers: 2,
};
