import { config } from '@n8n/node-cli/eslint';
import { globalIgnores } from 'eslint/config';

// n8n's community-node rules, unchanged, for everything that ships (nodes/, credentials/,
// package.json). The relay, the sandbox, the tests and the examples are separate packages or
// never shipped, so they are only ignored here.
export default [
	globalIgnores(['relay/', 'sandbox/', 'test/', 'examples/', 'scripts/', 'dist/']),
	...config,
];
