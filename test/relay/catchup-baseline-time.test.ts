// The catch-up's baseline reads a record's created_at as the latest instant it can mean
// (relay/src/catchup/baseline.ts): a time without a zone as UTC, to the end of its second; a
// record without a readable time is never before the baseline.
import { describe, expect, it } from 'vitest';
import { latestInstant, recordedBefore } from '../../relay/src/catchup/baseline.ts';

const at = (iso: string) => Date.parse(iso);

describe('the catch-up baseline: when a record was made', () => {
	it('a time without a zone is read as UTC, to the last millisecond it can name', () => {
		expect(latestInstant('2026-11-26 12:00:00')).toBe(at('2026-11-26T12:00:00.999Z'));
		expect(latestInstant('2026-11-26T12:00')).toBe(at('2026-11-26T12:00:59.999Z'));
	});

	it('a time with an offset is that instant, to the end of what it writes', () => {
		expect(latestInstant('2026-11-26T12:00:00Z')).toBe(at('2026-11-26T12:00:00.999Z'));
		expect(latestInstant('2026-11-26T15:00:00+03:00')).toBe(at('2026-11-26T12:00:00.999Z'));
		expect(latestInstant('2026-11-26 09:30:00 -0230')).toBe(at('2026-11-26T12:00:00.999Z'));
		expect(latestInstant('2026-11-26T12:00:00.5Z')).toBe(at('2026-11-26T12:00:00.599Z'));
		expect(latestInstant('2026-11-26T12:00:00.123456Z')).toBe(at('2026-11-26T12:00:00.123Z'));
	});

	it('no readable time: undefined, and never before the baseline', () => {
		for (const bad of [
			undefined,
			null,
			1764158400,
			'',
			'yesterday',
			'2026-02-30 00:00:00',
			'2026-11-26 24:00:00',
			'2026-11-26',
		])
			expect(latestInstant(bad), String(bad)).toBeUndefined();
		expect(recordedBefore({}, at('2030-01-01T00:00:00Z'))).toBe(false);
		expect(recordedBefore({ created_at: 'soon' }, at('2030-01-01T00:00:00Z'))).toBe(false);
	});

	it('before the baseline only when even the latest reading is before it', () => {
		const since = at('2026-11-26T12:00:00.500Z');
		expect(recordedBefore({ created_at: '2026-11-26 11:59:59' }, since)).toBe(true);
		// Written in the baseline's second: it may be after it.
		expect(recordedBefore({ created_at: '2026-11-26 12:00:00' }, since)).toBe(false);
		// Moscow time for the same instant reads three hours later: after, forwarded.
		expect(recordedBefore({ created_at: '2026-11-26 14:59:59' }, since)).toBe(false);
	});
});
