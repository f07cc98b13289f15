// A repo reads and writes its own module's tables only; another module's data comes through that module's service
// (its index.ts) or a view it owns. Table ownership is read from each module's tables.ts (pgTable('name', ...)).
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const SQL_TABLE = /\b(?:FROM|JOIN|UPDATE|INTO|TABLE)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)/gi;

let owners;
function tableOwners(root) {
  if (owners) return owners;
  owners = new Map();
  const modules = join(root, 'src', 'modules');
  for (const name of readdirSync(modules)) {
    const file = join(modules, name, 'tables.ts');
    if (!existsSync(file)) continue;
    for (const m of readFileSync(file, 'utf8').matchAll(/pgTable\(\s*'([a-z0-9_]+)'/g)) owners.set(m[1], name);
  }
  return owners;
}

function moduleOf(filename, root) {
  const parts = relative(root, filename).split(sep);
  return parts[0] === 'src' && parts[1] === 'modules' && parts.length > 3 ? parts[2] : undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
export const ownTables = {
  meta: {
    type: 'problem',
    docs: { description: "SQL in a module names only that module's tables" },
    schema: [],
    messages: {
      foreign:
        "'{{table}}' belongs to the {{owner}} module: reach it through that module's index.ts (a service method or a view it owns), not with SQL here.",
    },
  },
  create(context) {
    const root = context.cwd;
    const mine = moduleOf(context.filename, root);
    if (!mine) return {};
    const map = tableOwners(root);
    const check = (node, text) => {
      for (const m of text.matchAll(SQL_TABLE)) {
        const owner = map.get(m[1]);
        if (owner && owner !== mine) context.report({ node, messageId: 'foreign', data: { table: m[1], owner } });
      }
    };
    return {
      TemplateLiteral(node) {
        check(node, node.quasis.map((q) => q.value.cooked ?? q.value.raw).join(' '));
      },
      Literal(node) {
        if (typeof node.value === 'string') check(node, node.value);
      },
    };
  },
};

export default { rules: { 'own-tables': ownTables } };
