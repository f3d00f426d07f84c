// Jest orders a run it has no timings for (a fresh clone, as in CI) by file size, which starts the files
// below, each a minute or more of work in a small file, halfway through the run: one of them can leave a
// worker running alone at the end. With no timing for a file, these go first; once Jest has timings, its
// own order (slowest first) applies unchanged.
import testSequencer from '@jest/test-sequencer';

// A CommonJS module: its class is the `default` member of what it exports.
const Sequencer = testSequencer.default;

const SLOW_FIRST = [
  'test/bench/bench-quick.e2e-spec.ts',
  'test/fuzz/http-surface.e2e-spec.ts',
  'test/startup/startup-failures.e2e-spec.ts',
  'test/fault/crash.e2e-spec.ts',
  'test/intel/export-large.e2e-spec.ts',
  'test/ops/start-anywhere.e2e-spec.ts',
];

export default class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      if (this.time(test) != null) return SLOW_FIRST.length;
      const index = SLOW_FIRST.findIndex((file) => test.path.endsWith(file));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    // Array.prototype.sort is stable: within a rank, Jest's own order stays.
    return super.sort(tests).sort((a, b) => rank(a) - rank(b));
  }
}
