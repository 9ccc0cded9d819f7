// typescript-eslint for the packages n8n's community-node rules do not cover: the relay, the
// sandbox, the scripts and the tests. nodes/ and credentials/ stay with eslint.config.mjs, which
// `n8n-node lint` reads unchanged; this file is used only through `npm run lint:packages`.
//
// Rules: typescript-eslint's `recommended` set (syntax only, no type information), plus the
// type-aware rules that catch promises nobody awaits or handles. Those need the type checker, so
// each file is parsed with the TypeScript program of its package's tsconfig.json (the project
// service); the rest of the type-aware catalogue is left out: `recommendedTypeChecked` adds some
// 700 no-unsafe-* findings in the tests, which read untyped JSON answers on purpose.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
	globalIgnores(['**/dist/', '**/node_modules/', '**/coverage/']),
	{
		files: ['**/*.ts'],
		extends: [js.configs.recommended, ...tseslint.configs.recommended],
		languageOptions: {
			parserOptions: {
				projectService: true,
				tsconfigRootDir: import.meta.dirname,
			},
		},
		linterOptions: { reportUnusedDisableDirectives: 'error' },
		rules: {
			'@typescript-eslint/no-floating-promises': 'error',
			'@typescript-eslint/no-misused-promises': 'error',
			'@typescript-eslint/await-thenable': 'error',
			'@typescript-eslint/no-unused-vars': [
				'error',
				{ argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
			],
		},
	},
	{
		// The house rules on size: no product or bench file over 400 lines, no relay or sandbox function
		// over 80 (blank lines and comments count: a function is read whole).
		files: [
			'relay/src/**/*.ts',
			'relay/bench/**/*.ts',
			'relay/scripts/**/*.ts',
			'sandbox/src/**/*.ts',
			'scripts/**/*.ts',
		],
		rules: { 'max-lines': ['error', { max: 400 }] },
	},
	{
		// The sandbox's functions too (test/unit/line-cap.test.ts holds the same rule, and the
		// package's files in nodes/ and credentials/, which n8n's lint reads, to 400 lines).
		files: ['relay/src/**/*.ts', 'sandbox/src/**/*.ts'],
		rules: { 'max-lines-per-function': ['error', { max: 80 }] },
	},
	{
		// Tests read the JSON answers of the sandbox, the relay and n8n as `any` and assert on them.
		files: ['test/**/*.ts'],
		rules: { '@typescript-eslint/no-explicit-any': 'off' },
	},
);
