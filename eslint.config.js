// The lint rules of both packages: typescript-eslint's type-aware recommendations, with the
// formatting rules left to Prettier.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', 'bench/results/**', 'packages/apiserver/src/api/builtin-schemas.data.ts', 'docs/api/**'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // The examples' own tsconfig is a consumer's: it resolves `rxkube` to the built dist/, which a
    // clean checkout lacks. The root project resolves the same imports to lib/, so the lint does
    // not depend on a build having run.
    files: ['docs/examples/*.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // The examples compile under a consumer's stricter settings (noUncheckedIndexedAccess), where
      // a `!` the root project calls unnecessary is needed.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  // The plain scripts (bin/, the benchmarks' probes) run on Node.
  { files: ['**/*.js', '**/*.mjs'], languageOptions: { globals: globals.node } },
  prettier,
);
