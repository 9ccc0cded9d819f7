/**
 * The one way tests and the harness wait for something to happen: poll, return what was found,
 * fail with a sentence naming what never came.
 */

/** What a check answers while the thing waited for has not happened yet. */
export type NotYet = undefined | null | false;

export interface WaitOptions {
	/** Give up after this long (default 20 s). */
	timeoutMs?: number;
	/** Ask again after this long (default 25 ms). */
	everyMs?: number;
}

/**
 * For whatever runs outside the test's process and costs something to ask (n8n, a relay or
 * sandbox process, a database): wait longer, ask less often.
 */
export const OUTSIDE: WaitOptions = { timeoutMs: 30_000, everyMs: 200 };

/**
 * Calls `check` until it answers something other than undefined, null or false (0 and '' are
 * answers), and returns that; throws `timed out waiting for <what>` once `timeoutMs` has passed.
 */
export async function waitFor<T>(
	what: string,
	check: () => T | NotYet | Promise<T | NotYet>,
	options: WaitOptions = {},
): Promise<T> {
	const { timeoutMs = 20_000, everyMs = 25 } = options;
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value !== undefined && value !== null && value !== false) return value as T;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, everyMs));
	}
}
