// `npm start`: the built service, compiled first only when src/ changed since the last build. Runs in this
// process (no child), so signals reach the service directly.
import { buildIfStale } from './build.mjs';

buildIfStale();
await import('../dist/main.js');
