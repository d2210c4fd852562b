// `npm run lint`: typescript-eslint's type-checked rules, and the rules that say how this house is
// built (docs/architecture.md): no import cycles, no import from a lower layer up to a higher one,
// no function over 80 lines in src/, no floating promises. Formatting is Prettier's (`npm run
// format`), so the rules that would argue with it are off. A rule switched off at a line says why.

import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier';

/**
 * The layers, top to bottom. A module may import from its own layer's folders and from any layer
 * below it, never from one above. Folders on one line are peers and do not import each other.
 */
const LAYERS = [
  ['src/cli.ts'],
  ['src/cli'],
  ['src/app.ts'],
  ['src/transport', 'src/data', 'src/admin'],
  ['src/service'],
  ['src/providers'],
  ['src/accounts', 'src/contract'],
  ['src/ops'],
  ['src/store'],
  ['src/config.ts'],
  ['src/net', 'src/core'],
];

/** For each folder: the folders above it (and its peers), which it may not import from. */
function layerZones() {
  const zones = [];
  LAYERS.forEach((layer, i) => {
    const above = LAYERS.slice(0, i).flat();
    for (const target of layer) {
      const peers = layer.filter((p) => p !== target);
      const from = [...above, ...peers];
      if (from.length > 0) {
        zones.push({
          target: `./${target}`,
          from: from.map((f) => `./${f}`),
          message: 'a lower layer imports from a higher one (or a peer); see docs/architecture.md',
        });
      }
    }
  });
  return zones;
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-test/**',
      'node_modules/**',
      'reports/**',
      '.stryker-tmp/**',
      'test/interop/.build/**',
      'bench/.work/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // test/tsconfig.json holds src/, test/, bench/ and scripts/: one program for every TypeScript file linted.
      parserOptions: { project: ['./test/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
    rules: {
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      // The stores implement async interfaces (VehicleStore, AccountStore, ImportBatch): SQLite's
      // bodies are synchronous, and stay async so that callers meet one contract for both stores.
      '@typescript-eslint/require-await': 'off',
      // Control characters are what these expressions look for: a parameter, a log field or an XML
      // text that holds one is refused or escaped (README, Security).
      'no-control-regex': 'off',
      // Prettier wraps code at 120; this catches what it leaves long (comments). Strings, templates,
      // URLs and regular expressions are left whole, so that a message can be found with grep.
      'max-len': [
        'error',
        {
          code: 120,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreUrls: true,
          ignoreRegExpLiterals: true,
        },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones() }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { project: null },
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
  },
  prettier,
);
