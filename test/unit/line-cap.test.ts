// The size rules of the product code (scripts/line-cap.ts): no file of nodes/, credentials/,
// relay/src or sandbox/src over 400 lines, no function of sandbox/src over 80 (read with the
// TypeScript parser). nodes/ and credentials/ are linted by `n8n-node lint`, whose rules stay
// n8n's, so this test is where their file size is held. Each rule on a small tree, then on the
// repository.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileTrees } from '../helpers/file-tree.ts';
import { lineCapFindings, lineCount, longFunctions } from '../../scripts/line-cap.ts';

const ROOT = join(__dirname, '..', '..');
const tree = fileTrees('line-cap-');
const lines = (n: number) => Array.from({ length: n }, (_, i) => `// ${i + 1}`).join('\n') + '\n';
/** A function of `n` lines in all (its first and last line included). */
const fn = (head: string, n: number) => `${head} {\n${lines(n - 2)}}\n`;

describe('line cap', () => {
	it('counts lines as an editor does: a final newline adds none', () => {
		expect(lineCount('')).toBe(0);
		expect(lineCount('a')).toBe(1);
		expect(lineCount('a\n')).toBe(1);
		expect(lineCount('a\nb')).toBe(2);
		expect(lineCount('a\n\n')).toBe(2);
	});

	it('finds a product file over 400 lines, in every product folder and of any kind', () => {
		const root = tree({
			'nodes/PayPalych/helpers/big.ts': lines(401),
			'nodes/PayPalych/helpers/fits.ts': lines(400),
			'credentials/Big.credentials.ts': lines(500),
			'relay/src/store/big.ts': lines(401),
			'sandbox/src/big.json': lines(401),
			'relay/bench/not-product.ts': lines(900),
			'test/not-product.ts': lines(900),
		});
		expect(lineCapFindings(root)).toEqual([
			'nodes/PayPalych/helpers/big.ts has 401 lines (at most 400)',
			'credentials/Big.credentials.ts has 500 lines (at most 400)',
			'relay/src/store/big.ts has 401 lines (at most 400)',
			'sandbox/src/big.json has 401 lines (at most 400)',
		]);
	});

	it('finds a sandbox function over 80 lines in each of its forms, and names it', () => {
		const text = [
			fn('export function fits()', 80),
			fn('export async function routes(app: { get: (p: string, f: () => void) => void })', 81),
			`const arrow = () => ${fn('', 90).trimStart()}`,
			`app.get('/pay/:id', async () => ${fn('', 82).trimStart()});`,
			`class Store ${fn('', 3).replace('// 1', fn('method()', 85))}`,
		].join('\n');
		expect(longFunctions(text, 'a.ts').map(({ name, lines: n }) => `${name} ${n}`)).toEqual([
			'routes 81',
			'arrow 90',
			'(a function passed to app.get /pay/:id) 82',
			'method 85',
		]);
		const root = tree({ 'sandbox/src/api/a.ts': text, 'nodes/shared/a.ts': text });
		// Only the sandbox's functions are held to 80 lines (the relay's: eslint, the package's: none).
		expect(lineCapFindings(root)).toEqual([
			'nodes/shared/a.ts has 425 lines (at most 400)',
			'sandbox/src/api/a.ts has 425 lines (at most 400)',
			'sandbox/src/api/a.ts:82 function routes has 81 lines (at most 80)',
			'sandbox/src/api/a.ts:164 function arrow has 90 lines (at most 80)',
			'sandbox/src/api/a.ts:255 function (a function passed to app.get /pay/:id) has 82 lines (at most 80)',
			'sandbox/src/api/a.ts:339 function method has 85 lines (at most 80)',
		]);
	});

	it('holds the repository: no product file over 400 lines, no sandbox function over 80', () => {
		expect(lineCapFindings(ROOT)).toEqual([]);
	});
});
