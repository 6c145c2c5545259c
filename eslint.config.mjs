import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import { defineConfig } from 'eslint/config'
import globals from 'globals'
import tseslint from 'typescript-eslint'

// Lint for what formatting cannot catch; Prettier (.prettierrc.json) owns the layout, and
// eslint-config-prettier turns off the rules that would argue with it.
export default defineConfig(
  {
    // test/integrations/data-layer/woocommerce/*/: third-party plugins' published JavaScript, kept unmodified as fixtures.
    ignores: [
      'dist/',
      '**/node_modules/',
      'bench/entries/',
      'bench/out/',
      'demo/data/',
      'test/frameworks/',
      'test/types/',
      'coverage/',
      'temp/',
      'docs/.vitepress/cache/',
      'docs/.vitepress/dist/',
      'test/integrations/data-layer/woocommerce/*/'
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // Constructs a reader has to decode: a comma expression, an assignment where a condition is read.
      'no-sequences': ['error', { allowInParentheses: false }],
      'no-cond-assign': ['error', 'always'],
      'no-unused-vars': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }]
    }
  },
  {
    files: ['src/**/*.ts'],
    languageOptions: { globals: globals.browser }
  },
  {
    // The discovery client reads the service's JSON answers and the stores' payloads field by
    // field, checking each at run time: `any` stays at those boundaries only. Its public objects
    // are typed (test/types checks them from a consumer's side).
    files: ['src/client/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  },
  {
    files: ['test/**/*.ts', 'test/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { ...globals.node } }
  },
  {
    // Benchmarks hand functions to a browser page to run there.
    files: ['bench/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } }
  },
  {
    // The demo store's page scripts run in the browser: classic scripts, and the SPA's module.
    files: ['demo/store/**/*.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser }
  },
  {
    files: ['demo/store/**/*.mjs'],
    languageOptions: { globals: globals.browser }
  },
  prettier
)
