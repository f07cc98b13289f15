/**
 * Module boundaries, checked by `npm run check` (dependency-cruiser reads type-only imports too).
 * The reasons are in ARCHITECTURE.md ("Boundaries").
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle, type-only ones included: a type circle is one value import away from a real one.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'platform-knows-no-domain',
      severity: 'error',
      comment: 'src/platform is the cross-cutting layer: it imports nothing from src/modules.',
      from: { path: '^src/platform/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'module-through-index',
      severity: 'error',
      comment: 'Another module is reached only through its index.ts (its public surface); its tables, repo and services are its own.',
      from: { path: '^src/modules/([^/]+)/', pathNot: '^src/modules/[^/]+/tables\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'module-through-index',
      severity: 'error',
      comment: "A tables.ts may name another module's table in a foreign key (its tables.ts), nothing else of it.",
      from: { path: '^src/modules/([^/]+)/tables\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/(index|tables)\\.ts$'] },
    },
    {
      name: 'index-is-for-others',
      severity: 'error',
      comment: 'Nothing inside a module imports its own index.ts (the Context type lives in context.ts).',
      from: { path: '^src/modules/([^/]+)/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
      to: { path: '^src/modules/$1/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|test)/|\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
