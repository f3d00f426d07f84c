/**
 * The S3-compatible server of `npm run bench -- --storage s3` (s3rver from npm), in its own process so that
 * neither the service nor the bench's raw-SDK baseline shares its event loop. One bucket, `--bucket`, with
 * its data under `--dir`. Prints `LISTENING <port>` once it accepts connections.
 */
import S3rver from 's3rver';

const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1];

const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory: arg('--dir'),
  configureBuckets: [{ name: arg('--bucket'), configs: [] }],
});
const { port } = await server.run();
process.stdout.write(`LISTENING ${port}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
