/**
 * Fifth security round, the trigger: a TrsId naming a bill whose `bill/payments` never ends,
 * repeats itself, or answers pages of hostile size or speed. The trigger reads within its caps
 * (BILL_PAYMENTS_MAX_PAGES pages, BILL_PAYMENTS_MAX_ROWS rows, BILL_PAYMENTS_MAX_BYTES bytes) and
 * its budget (CONFIRM_BUDGET_MS, the whole answer included: an answer trickled a byte at a time
 * never idles), answers (a retry, or the postback confirmed by rows the service did send), and
 * other postbacks are answered meanwhile. The service's hostile answers come from a stand-in
 * (test/helpers/hostile-bill-service.ts).
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
	BILL_PAYMENTS_MAX_BYTES,
	BILL_PAYMENTS_MAX_PAGES,
	BILL_PAYMENTS_MAX_ROWS,
	CONFIRM_BUDGET_MS,
} from '../../dist/nodes/PayPalychTrigger/confirm.js';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';
import {
	BILL,
	OK_PAYMENT,
	startHostileBillService,
	type PagesMode,
} from '../helpers/hostile-bill-service.ts';

const TOKEN = 'fifth|token';
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
const cleanups: Array<() => Promise<void>> = [];
beforeEach(() => resetProcessMemory());
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

/** The postback of a MULTI link's sale whose TrsId is the bill's id. */
const billPostback = {
	InvId: 'link-1',
	OutSum: '40.00',
	TrsId: BILL,
	Status: 'SUCCESS',
	CurrencyIn: 'RUB',
	SignatureValue: md5(`40.00:link-1:${TOKEN}`),
};
/** An ordinary payment's postback: payment/status knows it at once. */
const okPostback = {
	InvId: 'order-ok',
	OutSum: '10.00',
	TrsId: OK_PAYMENT,
	Status: 'SUCCESS',
	CurrencyIn: 'RUB',
	SignatureValue: md5(`10.00:order-ok:${TOKEN}`),
};

async function world(mode: PagesMode) {
	const service = await startHostileBillService(mode);
	cleanups.push(() => service.close());
	const h = await startTrigger({ event: 'payment' }, { apiToken: TOKEN, baseUrl: service.url });
	cleanups.push(() => h.close());
	const pagesRead = () => service.calls.get('/api/v1/bill/payments') ?? 0;
	return { service, h, pagesRead };
}

/** The longest a confirmation may keep a postback's sender waiting: the budget and a margin. */
const ANSWERED_WITHIN_MS = CONFIRM_BUDGET_MS + 1500;

const cases: Array<{
	mode: PagesMode;
	says: string;
	receipt: 'retry' | 'accepted';
	maxPages: number;
	reason?: RegExp;
}> = [
	{
		mode: 'endless',
		says: 'a cursor that never ends: the page cap, then a retry',
		receipt: 'retry',
		maxPages: BILL_PAYMENTS_MAX_PAGES,
		reason: /page_cap after 50 pages/,
	},
	{
		mode: 'same-cursor',
		says: 'the same cursor again: reading stops at the repeat, the rows read confirm it',
		receipt: 'accepted',
		maxPages: 2,
	},
	{
		mode: 'same-rows',
		says: 'the same rows under new cursors: reading stops at the repeat',
		receipt: 'accepted',
		maxPages: 2,
	},
	{
		mode: 'same-url',
		says: 'links.next naming the page just read: it is not read again',
		receipt: 'accepted',
		maxPages: 1,
	},
	{
		mode: 'rows-100k',
		says: `a page of 100,000 rows: over ${BILL_PAYMENTS_MAX_ROWS} payments, a retry`,
		receipt: 'retry',
		maxPages: 1,
		reason: /more than 5000 payments/,
	},
	{
		mode: 'bytes-5mb',
		says: `a page of 5 MB: over ${BILL_PAYMENTS_MAX_BYTES} bytes of payments, a retry`,
		receipt: 'retry',
		maxPages: 1,
		reason: /bytes of them after 1 pages/,
	},
	{
		mode: 'trickle',
		says: 'a page trickled a byte every 100 ms, never ending: a retry at the budget',
		receipt: 'retry',
		maxPages: 2,
		reason: /could not be read/,
	},
	{
		mode: 'slow-pages',
		says: 'endless pages of one second each: a retry at the budget',
		receipt: 'retry',
		maxPages: 5,
	},
];

for (const [n, c] of cases.entries()) {
	it(`F5-3.${n + 1} bill/payments, ${c.says}; answered within the budget`, async () => {
		const { service, h, pagesRead } = await world(c.mode);
		service.slowMs = 1000;
		const started = Date.now();
		const answer = await postForm(h.url, billPostback);
		const took = Date.now() - started;
		expect(answer.receipt, answer.text).toBe(c.receipt);
		expect(answer.status).toBe(c.receipt === 'retry' ? 503 : 200);
		if (c.reason) expect(answer.text).toMatch(c.reason);
		expect(took).toBeLessThan(ANSWERED_WITHIN_MS);
		expect(pagesRead()).toBeGreaterThanOrEqual(1);
		expect(pagesRead()).toBeLessThanOrEqual(c.maxPages);
		if (c.receipt === 'accepted') expect(h.executions).toHaveLength(1);
		else expect(h.executions).toHaveLength(0);
	}, 20_000);
}

it('F5-4 other postbacks are answered while a bill trickles its pages', async () => {
	const { h, pagesRead } = await world('trickle');
	const stuck = postForm(h.url, billPostback);
	// The bill's confirmation is now reading the trickled page.
	for (let i = 0; i < 50 && pagesRead() === 0; i++) await new Promise((r) => setTimeout(r, 20));
	expect(pagesRead()).toBe(1);
	const started = Date.now();
	const other = await postForm(h.url, okPostback);
	expect(other.receipt, other.text).toBe('accepted');
	expect(Date.now() - started).toBeLessThan(1000);
	expect((await stuck).receipt).toBe('retry');
	expect(h.executions.map((e) => (e[0][0].json.payment as { id: string }).id)).toEqual([
		OK_PAYMENT,
	]);
}, 20_000);
