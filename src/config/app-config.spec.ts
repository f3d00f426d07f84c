import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig (decisions §1)', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      databaseUrl: undefined,
      databaseWaitSeconds: 30,
      dataDir: resolve('./data'),
      adminApiKey: undefined,
      tokenTtlSeconds: 3600,
      taskLeaseSeconds: 300,
      taskMaxDeliveries: 5,
      taskMaxLeaseSeconds: 3600,
      taskRetryBaseSeconds: 10,
      taskRetryMaxSeconds: 3600,
      changesRetentionDays: 30,
      historyRetentionDays: 365,
      uploadSessionTtlHours: 24,
      fileboxMaxFileBytes: 1073741824,
      jobIntervalSeconds: 300,
      embeddedPgSettings: {},
      embeddedPgFallbackDir: '/var/lib/intel-data-service',
      databasePoolSize: 24,
      exportPoolSize: 4,
      server: { headersTimeoutSeconds: 20, requestTimeoutSeconds: 600, keepAliveTimeoutSeconds: 5, maxConnections: 1000 },
      fileboxStorage: { kind: 'local' },
      expiryIntervalSeconds: 30,
      extensions: [],
      extensionSettings: {},
      metricsPort: 9464,
      logLevel: 'info',
      logFormat: 'json',
      shutdownGraceSeconds: 10,
      requestLimitLeaseMs: 250,
      console: { enabled: true, sessionIdleMinutes: 30, sessionMaxHours: 12 },
      pageMaxBytes: 8388608,
      audit: true,
      auditReads: false,
      auditRetentionDays: 365,
      trustProxy: [],
      sightings: { rawDays: 7, retentionDays: 365 },
      sources: {
        timeoutSeconds: 300,
        maxBytes: 268435456,
        denyNetworks: ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128'],
        leaseSeconds: 120,
        pollSeconds: 10,
      },
    });
  });

  it('reads every setting', () => {
    const config = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgresql://u:p@db:5432/intel',
      DATABASE_WAIT_SECONDS: '5',
      DATA_DIR: '/var/lib/ids',
      ADMIN_API_KEY: 'a-long-enough-admin-key',
      TOKEN_TTL_SECONDS: '60',
      TASK_LEASE_SECONDS: '10',
      TASK_MAX_DELIVERIES: '2',
      TASK_MAX_LEASE_SECONDS: '600',
      TASK_RETRY_BASE_SECONDS: '5',
      TASK_RETRY_MAX_SECONDS: '120',
      CHANGES_RETENTION_DAYS: '7',
      HISTORY_RETENTION_DAYS: '90',
      UPLOAD_SESSION_TTL_HOURS: '1',
      FILEBOX_MAX_FILE_BYTES: '1024',
      JOB_INTERVAL_SECONDS: '5',
      EMBEDDED_PG_SETTINGS: 'shared_buffers=2GB, work_mem=16MB,random_page_cost=1.5',
      EMBEDDED_PG_FALLBACK_DIR: '/srv/ids-pg',
      DATABASE_POOL_SIZE: '4',
      EXPORT_POOL_SIZE: '2',
      HEADERS_TIMEOUT_SECONDS: '2',
      REQUEST_TIMEOUT_SECONDS: '30',
      KEEP_ALIVE_TIMEOUT_SECONDS: '65',
      MAX_CONNECTIONS: '50',
      EXPIRY_INTERVAL_SECONDS: '7',
      EXTENSIONS: 'package.json, tsconfig.json',
      EXT_SOMETHING: 'for an extension',
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      LOG_FORMAT: 'pretty',
      SHUTDOWN_GRACE_SECONDS: '0',
      REQUEST_LIMIT_LEASE_MS: '1000',
      CONSOLE_ENABLED: 'false',
      CONSOLE_SESSION_IDLE_MINUTES: '5',
      CONSOLE_SESSION_MAX_HOURS: '2',
      PAGE_MAX_BYTES: '65536',
      AUDIT: 'off',
      AUDIT_READS: 'true',
      AUDIT_RETENTION_DAYS: '30',
      TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,loopback, 2001:db8::/32',
      SIGHTING_RAW_DAYS: '2',
      SIGHTING_RETENTION_DAYS: '90',
      SOURCE_TIMEOUT_SECONDS: '20',
      SOURCE_MAX_BYTES: '1024',
      SOURCE_DENY_NETWORKS: '10.0.0.0/8, 169.254.169.254/32',
      SOURCE_LEASE_SECONDS: '45',
      SOURCE_POLL_SECONDS: '3',
    });
    expect(config).toEqual({
      port: 9000,
      databaseUrl: 'postgresql://u:p@db:5432/intel',
      databaseWaitSeconds: 5,
      dataDir: '/var/lib/ids',
      adminApiKey: 'a-long-enough-admin-key',
      tokenTtlSeconds: 60,
      taskLeaseSeconds: 10,
      taskMaxDeliveries: 2,
      taskMaxLeaseSeconds: 600,
      taskRetryBaseSeconds: 5,
      taskRetryMaxSeconds: 120,
      changesRetentionDays: 7,
      historyRetentionDays: 90,
      uploadSessionTtlHours: 1,
      fileboxMaxFileBytes: 1024,
      jobIntervalSeconds: 5,
      embeddedPgSettings: { shared_buffers: '2GB', work_mem: '16MB', random_page_cost: '1.5' },
      embeddedPgFallbackDir: '/srv/ids-pg',
      databasePoolSize: 4,
      exportPoolSize: 2,
      server: { headersTimeoutSeconds: 2, requestTimeoutSeconds: 30, keepAliveTimeoutSeconds: 65, maxConnections: 50 },
      fileboxStorage: { kind: 'local' },
      expiryIntervalSeconds: 7,
      extensions: [resolve('package.json'), resolve('tsconfig.json')],
      extensionSettings: { EXT_SOMETHING: 'for an extension' },
      metricsPort: 0,
      logLevel: 'silent',
      logFormat: 'pretty',
      shutdownGraceSeconds: 0,
      requestLimitLeaseMs: 1000,
      console: { enabled: false, sessionIdleMinutes: 5, sessionMaxHours: 2 },
      pageMaxBytes: 65536,
      audit: false,
      auditReads: true,
      auditRetentionDays: 30,
      trustProxy: ['10.0.0.1', '192.168.0.0/16', 'loopback', '2001:db8::/32'],
      sightings: { rawDays: 2, retentionDays: 90 },
      sources: { timeoutSeconds: 20, maxBytes: 1024, denyNetworks: ['10.0.0.0/8', '169.254.169.254/32'], leaseSeconds: 45, pollSeconds: 3 },
    });
  });

  it('reads FILEBOX_STORAGE=s3://bucket/prefix with the AWS SDK variables (extensions §6)', () => {
    expect(loadConfig({ FILEBOX_STORAGE: 's3://samples' }).fileboxStorage).toEqual({
      kind: 's3',
      bucket: 'samples',
      prefix: '',
      endpoint: undefined,
      region: 'us-east-1',
      credentials: undefined,
    });
    expect(
      loadConfig({
        FILEBOX_STORAGE: 's3://my.bucket-1/team/files/',
        AWS_ENDPOINT_URL: 'http://other:1',
        AWS_ENDPOINT_URL_S3: 'http://minio:9000',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'id',
        AWS_SECRET_ACCESS_KEY: 'secret',
      }).fileboxStorage,
    ).toEqual({
      kind: 's3',
      bucket: 'my.bucket-1',
      prefix: 'team/files/',
      endpoint: 'http://minio:9000',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
  });

  it.each([['s3:/bucket'], ['s3://'], ['s3://Bucket'], ['s3://ab'], ['s3://bucket//x'], ['s3://bucket/../x'], ['gcs://bucket'], ['/var/files']])(
    'refuses FILEBOX_STORAGE=%p with a one-line message',
    (value) => {
      expect(() => loadConfig({ FILEBOX_STORAGE: value })).toThrow(ConfigError);
      expect(() => loadConfig({ FILEBOX_STORAGE: value })).toThrow(/FILEBOX_STORAGE/);
    },
  );

  it('refuses half a pair of S3 keys and an endpoint that is not a URL', () => {
    expect(() => loadConfig({ FILEBOX_STORAGE: 's3://bucket', AWS_ACCESS_KEY_ID: 'id' })).toThrow(ConfigError);
    expect(() => loadConfig({ FILEBOX_STORAGE: 's3://bucket', AWS_ENDPOINT_URL: 'minio:9000' })).toThrow(ConfigError);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: ' ', ADMIN_API_KEY: '' })).toMatchObject({
      port: 8080,
      databaseUrl: undefined,
      adminApiKey: undefined,
    });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['TOKEN_TTL_SECONDS', '0'],
    ['TOKEN_TTL_SECONDS', '1h'],
    ['TASK_LEASE_SECONDS', '0'],
    ['TASK_MAX_DELIVERIES', 'many'],
    ['TASK_MAX_LEASE_SECONDS', '0'],
    ['TASK_RETRY_BASE_SECONDS', '-1'],
    ['CHANGES_RETENTION_DAYS', '0'],
    ['HISTORY_RETENTION_DAYS', '0'],
    ['UPLOAD_SESSION_TTL_HOURS', '-3'],
    ['FILEBOX_MAX_FILE_BYTES', '1e9'],
    ['JOB_INTERVAL_SECONDS', '0'],
    ['DATABASE_WAIT_SECONDS', '3601'],
    ['EXPIRY_INTERVAL_SECONDS', '0'],
    ['SIGHTING_RAW_DAYS', '0'],
    ['SIGHTING_RETENTION_DAYS', 'a year'],
    ['EXTENSIONS', 'no/such/extension.js'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['ADMIN_API_KEY', 'short'],
    ['EMBEDDED_PG_SETTINGS', 'shared_buffers'],
    ['EMBEDDED_PG_SETTINGS', 'shared_buffers=2GB -c fsync=off'],
    ['EMBEDDED_PG_SETTINGS', 'Shared-Buffers=2GB'],
    ['EMBEDDED_PG_SETTINGS', 'work_mem=16MB=x'],
    ['EMBEDDED_PG_SETTINGS', 'work_mem='],
    ['EMBEDDED_PG_SETTINGS', 'logging_collector=on'],
    ['DATABASE_POOL_SIZE', '0'],
    ['HEADERS_TIMEOUT_SECONDS', '0'],
    ['REQUEST_TIMEOUT_SECONDS', '5m'],
    ['KEEP_ALIVE_TIMEOUT_SECONDS', '0'],
    ['MAX_CONNECTIONS', '0'],
    ['METRICS_PORT', '65536'],
    ['METRICS_PORT', 'on'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_LEVEL', 'INFO\nx'],
    ['LOG_FORMAT', 'text'],
    ['SHUTDOWN_GRACE_SECONDS', '5s'],
    ['AUDIT', 'yes'],
    ['AUDIT_READS', 'on'],
    ['AUDIT_RETENTION_DAYS', '0'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', 'proxy.example'],
    ['CONSOLE_ENABLED', 'maybe'],
    ['CONSOLE_SESSION_IDLE_MINUTES', '0'],
    ['CONSOLE_SESSION_MAX_HOURS', '721'],
  ])('refuses %s=%p with a one-line message naming the setting', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(name);
    expect(message).not.toContain('\n');
  });

  it('refuses a SOURCE_DENY_NETWORKS entry that is not a CIDR', () => {
    expect(() => loadConfig({ SOURCE_DENY_NETWORKS: '169.254.0.0/16,metadata' })).toThrow(/SOURCE_DENY_NETWORKS: "metadata" is not a CIDR/);
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_SECONDS: '60', REQUEST_TIMEOUT_SECONDS: '30' })).toThrow(
      /HEADERS_TIMEOUT_SECONDS must not exceed REQUEST_TIMEOUT_SECONDS/,
    );
  });

  it('refuses raw sightings kept longer than anything', () => {
    expect(() => loadConfig({ SIGHTING_RAW_DAYS: '30', SIGHTING_RETENTION_DAYS: '10' })).toThrow(/SIGHTING_RAW_DAYS must not exceed SIGHTING_RETENTION_DAYS/);
  });
});
