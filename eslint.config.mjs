import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'dist-base/**', 'coverage/**', '.data/**', 'monitoring/**', 'compose/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['services/*/src/**/*.ts', 'packages/*/src/**/*.ts'],
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../services/*', '../../../services/*'],
              message: 'A service never imports another service; move shared code to packages/.',
            },
          ],
          paths: ['node:child_process', 'child_process'].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'Programs run only inside the OS sandbox: use Sandbox.spawn/launcher from @mcp-fleet/sandbox (docs/security.md).',
          })),
        },
      ],
    },
  },
  {
    // The sandbox itself; host facts from ps with a fixed argument list (no caller input, docs/security.md).
    files: ['packages/sandbox/src/**/*.ts', 'packages/host/src/**/*.ts', 'packages/testing/src/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
  },
  {
    // Tests read JSON answers whose shape is what they assert.
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Browser scripts: the secrets UI's and the gateway's status page (src/http/ui/).
    files: ['services/*/src/ui/**/*.js', 'services/*/src/http/ui/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { document: 'readonly', window: 'readonly', fetch: 'readonly' } },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
