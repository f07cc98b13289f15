import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { cruise } from 'dependency-cruiser';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The module boundaries of ARCHITECTURE.md are checked by `npm run check`; here each rule is shown to catch a probe
 * line that breaks it (and to stay quiet on a tree that keeps it), so a rule that silently stopped working fails.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const { forbidden } = createRequire(import.meta.url)(path.join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: unknown[] };

let dir: string;

/** A throwaway tree with these files, cruised with the project's rules: the names of the rules broken. */
async function brokenRules(files: Record<string, string>): Promise<string[]> {
  const root = await mkdtemp(path.join(dir, 'tree-'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  const result = await cruise(
    ['src'],
    { validate: true, ruleSet: { forbidden } as never, baseDir: root, tsPreCompilationDeps: true },
    { extensions: ['.ts'] },
  );
  const output = result.output as { summary: { violations: { rule: { name: string } }[] } };
  return [...new Set(output.summary.violations.map((v) => v.rule.name))].sort();
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'boundaries-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('module boundaries', () => {
  const clean = {
    'src/platform/db.ts': 'export const db = 1;\n',
    'src/modules/a/context.ts': "import type { db } from '../../platform/db';\nexport type AContext = { db: typeof db };\n",
    'src/modules/a/service.ts': "import type { AContext } from './context';\nexport const aService = (c: AContext) => c;\n",
    'src/modules/a/tables.ts': 'export const aTable = 1;\n',
    'src/modules/a/index.ts': "export { aService } from './service';\nexport type { AContext } from './context';\n",
    'src/modules/b/tables.ts': "import { aTable } from '../a/tables';\nexport const bTable = aTable;\n",
    'src/modules/b/service.ts': "import { aService } from '../a/index';\nexport const bService = aService;\n",
  };

  it('a tree that keeps the rules breaks none (a foreign key from tables.ts to tables.ts is allowed)', async () => {
    expect(await brokenRules(clean)).toEqual([]);
  });

  it.each([
    [
      'platform-knows-no-domain',
      { 'src/platform/probe.ts': "import { aService } from '../modules/a/index';\nexport const p = aService;\n" },
    ],
    ['module-through-index', { 'src/modules/b/probe.ts': "import { aService } from '../a/service';\nexport const p = aService;\n" }],
    ['module-through-index', { 'src/modules/b/repo.ts': "import { aTable } from '../a/tables';\nexport const p = aTable;\n" }],
    ['index-is-for-others', { 'src/modules/a/probe.ts': "import type { AContext } from './index';\nexport type P = AContext;\n" }],
  ])('%s: a probe line breaking it fails', async (rule, probe) => {
    expect(await brokenRules({ ...clean, ...probe })).toContain(rule);
  });

  it('no-circular: an import circle fails, a type-only one too', async () => {
    const circle = {
      'src/modules/a/service.ts': "import type { AContext } from './context';\nexport const aService = (c: AContext) => c;\n",
      'src/modules/a/context.ts': "import type { aService } from './service';\nexport type AContext = { s: typeof aService };\n",
    };
    expect(await brokenRules({ ...clean, ...circle })).toContain('no-circular');
  });

  it("own-tables: a repo's SQL naming another module's table fails the lint; its own tables pass", async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const lint = async (filePath: string, sql: string) =>
      (await eslint.lintText(`export const q = \`${sql}\`;\n`, { filePath: path.join(ROOT, filePath) }))[0]!.messages.filter(
        (m) => m.ruleId === 'local/own-tables',
      );
    const foreign = await lint('src/modules/commerce/repo/probe.ts', 'SELECT t.id FROM trip t JOIN users u ON u.id = t.driver_id');
    expect(foreign.map((m) => [m.severity, m.message.split(' belongs')[0]])).toEqual([
      [2, "'trip'"],
      [2, "'users'"],
    ]);
    expect(await lint('src/modules/logistics/repo/probe.ts', 'SELECT t.id FROM trip t JOIN user_contact u ON u.id = t.driver_id')).toEqual(
      [],
    );
  });
});
