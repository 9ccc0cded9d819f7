// The searches' dates and page shapes, on both profiles: `start_date` / `finish_date` as the
// interface document's `Y-m-d` days or as date-times (the service's reference describes them as
// date-times in UTC) on every search; `links` / `meta` as one-element lists on bill/search,
// payment/search, payout/search and bill/payments in `live` (as the service's typed client models
// them), as objects on refund/search, and as objects everywhere in `spec`.
import { describe, expect, it } from 'vitest';
import { PROFILES } from '../helpers/sandbox.ts';
import { harnessAndListener, type Harness } from './helpers.ts';

let h: Harness;
harnessAndListener((started) => {
	h = started;
});

type Merchant = Awaited<ReturnType<Harness['merchant']>>;

/** A bill, a full payment of it and a payout, made at `iso` on the sandbox clock. */
async function recordsAt(m: Merchant, iso: string, orderId: string) {
	await h.control('POST', 'clock', { now: iso });
	try {
		const bill = await h.api(
			'POST',
			'bill/create',
			{ amount: '10.00', shop_id: m.shopId, order_id: orderId },
			m.token,
		);
		const paid = await h.control('POST', `bills/${bill.body.bill_id}/pay`, {});
		const payout = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '10.00', payout_account_id: m.payoutAccountId },
			m.token,
		);
		const refund = await h.api(
			'POST',
			'refund/partial/create',
			{ payment_id: paid.body.payment.id, amount: '1.00' },
			m.token,
		);
		return {
			'bill/search': bill.body.bill_id as string,
			'payment/search': paid.body.payment.id as string,
			'payout/search': payout.body.data[0].id as string,
			'refund/search': refund.body.id as string,
		};
	} finally {
		await h.control('POST', 'clock', { now: null });
	}
}

const SEARCHES = ['bill/search', 'payment/search', 'payout/search', 'refund/search'] as const;

describe.each(PROFILES)('searches (%s profile)', (profile) => {
	it("take Y-m-d days and date-times on every search, in the profile's reading of each", async () => {
		const m = await h.merchant({ profile, refunds: true });
		// 10 March 2025, 12:00 and 22:30 UTC (22:30 UTC is 01:30 on 11 March in Moscow).
		const noon = await recordsAt(m, '2025-03-10T12:00:00Z', 'noon');
		const late = await recordsAt(m, '2025-03-10T22:30:00Z', 'late');
		for (const path of SEARCHES) {
			const found = async (start_date: string, finish_date: string) => {
				const answer = await h.api('GET', path, { start_date, finish_date }, m.token);
				expect(answer.status, `${path} ${start_date} ${finish_date}: ${answer.text}`).toBe(200);
				return answer.body.data.map((row: { id: string }) => row.id);
			};
			// The document's days: UTC days with finish_date included in `live`; Moscow days in
			// `spec`, finish_date excluded (refund/search: included, the sandbox's own guess).
			const finishIncluded = profile === 'live' || path === 'refund/search';
			expect(await found('2025-03-10', '2025-03-10'), path).toEqual(
				profile === 'live' ? [noon[path], late[path]] : finishIncluded ? [noon[path]] : [],
			);
			expect(await found('2025-03-10', '2025-03-11'), path).toEqual(
				profile === 'live' || finishIncluded ? [noon[path], late[path]] : [noon[path]],
			);
			// Date-times: instants, UTC in `live` (`Y-m-d H:i:s` and ISO 8601 alike), on the
			// Moscow clock in `spec` unless they name their offset.
			const utc = profile === 'live';
			expect(await found('2025-03-10 12:00:00', '2025-03-10 22:30:00'), path).toEqual(
				utc
					? [noon[path], late[path]]
					: // 12:00 Moscow is 09:00 UTC; up to 22:30 Moscow (19:30 UTC).
						[noon[path]],
			);
			expect(await found('2025-03-10T12:00:01Z', '2025-03-10T22:30:00+00:00'), path).toEqual(
				finishIncluded ? [late[path]] : [],
			);
			expect(await found('2025-03-10T11:00:00Z', '2025-03-10T12:00:00Z'), path).toEqual(
				finishIncluded ? [noon[path]] : [],
			);
		}
	});

	it('refuse what is no date, and a finish before the start, in either form', async () => {
		const m = await h.merchant({ profile, refunds: true });
		for (const path of SEARCHES) {
			for (const [start_date, finish_date, field] of [
				['2025-03-10 25:00:00', '2025-03-11', 'start_date'],
				['2025-03-10', '2025-02-30T10:00:00Z', 'finish_date'],
				['yesterday', '2025-03-11', 'start_date'],
				['2025-03-10T12:00:00Z', '2025-03-10 11:59:59', 'finish_date'],
			] as const) {
				const answer = await h.api('GET', path, { start_date, finish_date }, m.token);
				expect(answer.status, `${path} ${start_date} ${finish_date}`).toBe(422);
				expect(Object.keys(answer.body.errors), path).toContain(field);
			}
		}
	});

	it('answer links and meta as one-element lists in live on every cursor-paged list but refund/search', async () => {
		// Pages of one row (`spec` pages its searches by searchPageSize, whatever per_page says).
		const m = await h.merchant({ profile, refunds: true, searchPageSize: 1 });
		await recordsAt(m, new Date().toISOString(), 'one');
		await recordsAt(m, new Date().toISOString(), 'two');
		const multi = await h.api(
			'POST',
			'bill/create',
			{ amount: '10.00', shop_id: m.shopId, type: 'multi' },
			m.token,
		);
		const billId = multi.body.bill_id as string;
		await h.control('POST', `bills/${billId}/pay`, {});
		await h.control('POST', `bills/${billId}/pay`, {});
		const range = { start_date: '2000-01-01', finish_date: '2100-01-01', per_page: '1' };
		const lists: Array<[string, Record<string, string>, boolean]> = [
			['bill/search', range, true],
			['payment/search', range, true],
			['payout/search', range, true],
			['bill/payments', { id: billId, per_page: '1' }, true],
			['refund/search', range, false],
		];
		for (const [path, query, listShaped] of lists) {
			const answer = await h.api('GET', path, query, m.token);
			expect(answer.status, path).toBe(200);
			const { links, meta } = answer.body;
			if (profile === 'live' && listShaped) {
				expect(links, path).toEqual([{ next: expect.any(String), prev: null }]);
				expect(meta, path).toEqual([
					{ per_page: 1, next_cursor: expect.any(String), prev_cursor: null },
				]);
			} else {
				expect(Array.isArray(links), path).toBe(false);
				expect(Array.isArray(meta), path).toBe(false);
				expect(links.next, path).toEqual(expect.any(String));
			}
		}
	});
});
