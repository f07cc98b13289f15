import { fuzzSuite } from '../hardening/fuzz-suite.js';

// `npm run fuzz`: the hardening fuzz suite with FUZZ_RUNS (2000) generated cases per role.
fuzzSuite(2000);
