import { randomUUID } from 'node:crypto';

/**
 * A time-ordered UUID (version 7: 48-bit milliseconds, then random bits). New events land at the
 * right edge of the primary-key index, so a commit touches few pages (a random v4 id would dirty a
 * different index page for every event).
 */
export function uuidV7(ms: number = Date.now()): string {
	// randomUUID draws from a cached entropy pool (one getrandom per 128 ids, where randomBytes(16)
	// costs one per id); its version-4 bits are replaced below.
	const r = randomUUID();
	const t = ms.toString(16).padStart(12, '0').slice(-12);
	const variant = ((parseInt(r[19], 16) & 0x3) | 0x8).toString(16);
	return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(15, 18)}-${variant}${r.slice(20)}`;
}
