// The lint rules of both packages: typescript-eslint's type-aware recommendations, with the
// formatting rules left to Prettier.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      'node_modules/**',
      'bench/results/**',
      'bench/e2e/.build*/**',
      'bench/e2e/.data/**',
      'packages/apiserver/src/api/builtin-schemas.data.ts',
      'docs/api/**',
    ],
  },
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
  {
    rules: {
      // A leading underscore names what is left out on purpose: `const { status: _status, ...rest } = o`.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      // A fake or a wrapper passes a rejection on as it came (a caught value, an AbortSignal's reason, typed `any`).
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true, allowThrowingAny: true }],
    },
  },
  {
    // Specs and examples implement Promise-returning interfaces with `async` methods that need no
    // await: an async method turns a throw into a rejection, as the real implementation would.
    files: ['spec/**/*.ts', 'packages/apiserver/spec/**/*.ts', 'docs/examples/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // The server's specs play clients and webhooks: they read JSON off the wire and pin its shape
    // with `expect`, which is the check a type would repeat.
    files: ['packages/apiserver/spec/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The server reads fields of objects its schemas admitted, typed as JSON values: `String(field)`
    // of a field the schema makes a scalar is its idiom. What comes from outside the schemas (a
    // webhook's answer) is quoted with admission/client.ts's answerText.
    files: ['packages/apiserver/src/**/*.ts'],
    rules: { '@typescript-eslint/no-base-to-string': 'off' },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  // The plain scripts (bin/, the benchmarks' probes) run on Node.
  { files: ['**/*.js', '**/*.mjs'], languageOptions: { globals: globals.node } },
  prettier,
);
