// The one waitFor of tests and harness (scripts/harness/wait.ts): what counts as an answer, and
// the sentence it fails with.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../scripts/harness/wait.ts';

describe('waitFor', () => {
	it('asks again while the check answers undefined, null or false, and returns the first answer', async () => {
		const answers: unknown[] = [undefined, null, false, 'found'];
		let asked = 0;
		const found = await waitFor('the answer', () => answers[asked++], { everyMs: 1 });
		expect(found).toBe('found');
		expect(asked).toBe(4);
	});

	it('takes 0 and the empty string as answers', async () => {
		expect(await waitFor('a count', () => 0)).toBe(0);
		expect(await waitFor('a text', async () => '')).toBe('');
	});

	it('fails naming what never came, once the time is up', async () => {
		const started = Date.now();
		await expect(
			waitFor('the relay to listen', () => undefined, { timeoutMs: 50, everyMs: 10 }),
		).rejects.toThrow('timed out waiting for the relay to listen');
		expect(Date.now() - started).toBeLessThan(2_000);
	});
});
