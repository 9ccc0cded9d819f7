import { defineConfig } from 'vitest/config';

// End-to-end suite: real n8n, relay and sandbox processes. One file at a time, one worker, long
// time limits (a first run on a new machine may include installing n8n).
export default defineConfig({
	test: {
		include: ['test/e2e/**/*.test.ts'],
		testTimeout: 240_000,
		hookTimeout: 900_000,
		pool: 'forks',
		maxWorkers: 1,
		fileParallelism: false,
		sequence: { concurrent: false, shuffle: false },
		reporters: ['verbose'],
	},
});
