// One lint config. The rules that matter most: src/core never imports vscode (the core is shared
// by the extension and the `expbench` CLI), and its rooms keep their layer order (layers/floor-order).
import tseslint from 'typescript-eslint';
import layers from './eslint/layers-plugin.mjs';
import regexp from 'eslint-plugin-regexp';

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', '.cache/**', '.vscode-test/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      'no-console': 'off',
    },
  },
  {
    files: ['src/core/**/*.ts', 'src/cli/**/*.ts', 'src/protocol/**/*.ts', 'webview-ui/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'src/core, src/cli, src/protocol and webview-ui must not import vscode: use src/extension to adapt.' }],
      }],
      'no-restricted-syntax': ['error', {
        selector: "CallExpression[callee.name='require'][arguments.0.value='vscode']",
        message: 'src/core must not require vscode.',
      }],
    },
  },
  {
    // The layer order of src/core (docs/architecture.md, eslint/layers.mjs).
    files: ['src/core/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/floor-order': 'error' },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'no-console': ['error'] },
  },
  {
    // No regular expression that can backtrack super-linearly: every pattern may meet text the
    // solver wrote (a 990,000-character note without spaces, a patch, a log). Issue 26, item 5.
    files: ['src/**/*.ts'],
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-move': ['error', { ignoreSticky: true, ignorePartial: false }],
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
