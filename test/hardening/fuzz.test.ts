import { fuzzSuite } from './fuzz-suite.js';

// CI size: a few generated cases per operation (FUZZ_RUNS overrides); `npm run fuzz` runs the same suite with more.
fuzzSuite(300);
