// `npm run lint`: typescript-eslint's type-checked rules over src/, test/, bench/, console/ and
// scripts/, and the rules that say how this house is built (docs/architecture.md): no import cycles,
// no import from a lower layer up to a higher one, no function over 80 lines in src/ and console/,
// no floating promises. Formatting is Prettier's (`npm run
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
    },
  },
  {
    files: ['src/**/*.ts', 'console/**/*.js'],
    rules: {
      // IIFEs count too: a script wrapped in one is still one function to read.
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Answers parsed from the wire (JSON.parse, a SOAP client's result, a scrape) are `any` by
      // nature, and a test reads them to check them: typing each one would restate the contract the
      // test is checking. The code under test keeps these rules.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // jest.isolateModules gives a fresh instance of a module only to a require() inside its callback.
      '@typescript-eslint/no-require-imports': 'off',
      // expect(obj.method) hands a jest mock, or the method's identity, to a matcher that never calls it.
      '@typescript-eslint/unbound-method': 'off',
      // node-soap's clients and results are untyped; the tests name them Record<string, any>.
      '@typescript-eslint/no-explicit-any': 'off',
      // A parsed value is turned to text to be compared as the wire shows it.
      '@typescript-eslint/no-base-to-string': 'off',
      // Fakes reject with null, undefined or a string on purpose: the code under test must cope with
      // whatever a dependency throws.
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
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
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      // These files are CommonJS (bin/, scripts/, the jest helpers): require() is how they import.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The admin console: modules the browser runs, with the browser's globals and no Node.
    files: ['console/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        sessionStorage: 'readonly',
        fetch: 'readonly',
        URLSearchParams: 'readonly',
        crypto: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        console: 'readonly',
        require: 'off',
        module: 'off',
        process: 'off',
        __dirname: 'off',
      },
    },
  },
  prettier,
  {
    // After eslint-config-prettier, which turns max-len off.
    rules: {
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
    },
  },
);
