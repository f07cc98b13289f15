// `npm run web:types`: the OpenAPI document this server produces, as TypeScript types for the web pages
// (web/src/api-types.ts, committed; test/web/api-types.test.ts fails when it is out of date).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { apiTypesSource } from '../test/web/api-types.js';

const out = path.resolve(import.meta.dirname, '../web/src/api-types.ts');
writeFileSync(out, await apiTypesSource());
console.log(`wrote ${path.relative(process.cwd(), out)}`);
process.exit(0);
