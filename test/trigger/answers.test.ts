import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { startTrigger } from '../helpers/trigger-harness.ts';

// Every way the trigger answers a call, written out whole: status, headers, body, whether a run
// starts, and the log line with its level. These hold the answers exactly as the service, the
// relay and the operator's log searches know them.
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
const TOKEN = 'answers-token';
const FORM = 'application/x-www-form-urlencoded';
let workflows = 0;

const open: WebhookHarness[] = [];
afterEach(async () => {
	for (const h of open.splice(0)) await h.close();
});

async function harness(parameters: Record<string, unknown>, apiToken = TOKEN, baseUrl = '') {
	const h = await startTrigger(
		{ confirmWithApi: false, ...parameters },
		{ apiToken, baseUrl: baseUrl || 'https://pal24.pro' },
		{ workflowId: `wf-answers-${++workflows}` },
	);
	open.push(h);
	return h;
}

function payment(overrides: Record<string, string> = {}, token = TOKEN) {
	const base: Record<string, string> = {
		InvId: 'order-7',
		OutSum: '10.00',
		Commission: '0.30',
		Currency: 'RUB',
		TrsId: 'PAY-1',
		Status: 'SUCCESS',
		...overrides,
	};
	base.SignatureValue = overrides.SignatureValue ?? md5(`${base.OutSum}:${base.InvId}:${token}`);
	return base;
}

function redirect(token = TOKEN) {
	const base: Record<string, string> = { InvId: 'order-7', OutSum: '10.00', CurrencyIn: 'RUB' };
	base.SignatureValue = md5(`${base.OutSum}:${base.InvId}:${token}`);
	return base;
}

/** One call, and everything observable about its answer. */
async function transcript(
	h: WebhookHarness,
	body: string,
	headers: Record<string, string> = {},
	contentType = FORM,
) {
	const before = h.logs.length;
	const started = h.executions.length;
	const res = await fetch(h.url, {
		method: 'POST',
		headers: { 'content-type': contentType, ...headers },
		body,
		redirect: 'manual',
	});
	const text = await res.text();
	return {
		status: res.status,
		receipt: res.headers.get('x-paypalych-receipt'),
		contentType: res.headers.get('content-type'),
		cacheControl: res.headers.get('cache-control'),
		retryAfter: res.headers.get('retry-after'),
		location: res.headers.get('location'),
		body: text,
		started: h.executions.length > started,
		logs: h.logs
			.slice(before)
			.filter((l) => l.message.startsWith('PayPalych Trigger'))
			.map((l) => ({ level: l.level, message: l.message, metadata: l.metadata })),
	};
}

/** The answers as the trigger gave them before its steps were split out of webhook(). */
const EXPECTED = {
	forwarded: {
		status: 200,
		receipt: 'ignored',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'OK',
		started: false,
		logs: [
			{
				level: 'debug',
				message: 'PayPalych Trigger (payment) ignored a call forwarded as payout',
				metadata: {
					workflowId: 'wf-answers-1',
				},
			},
		],
	},
	garbage: {
		status: 401,
		receipt: 'rejected',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'Required field OutSum is missing',
		started: false,
		logs: [
			{
				level: 'warn',
				message:
					'PayPalych Trigger refused a payment call (HTTP 401): Required field OutSum is missing',
				metadata: {
					workflowId: 'wf-answers-1',
				},
			},
		],
	},
	tooLarge: {
		status: 400,
		receipt: 'rejected',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'The body is larger than 65536 bytes',
		started: false,
		logs: [
			{
				level: 'warn',
				message:
					'PayPalych Trigger refused a payment call (HTTP 400): The body is larger than 65536 bytes',
				metadata: {
					workflowId: 'wf-answers-1',
				},
			},
		],
	},
	forged: {
		status: 401,
		receipt: 'rejected',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'SignatureValue does not match the API token',
		started: false,
		logs: [
			{
				level: 'warn',
				message:
					'PayPalych Trigger refused a payment call (HTTP 401): SignatureValue does not match the API token',
				metadata: {
					workflowId: 'wf-answers-1',
				},
			},
		],
	},
	accepted: {
		status: 200,
		receipt: 'accepted',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'OK',
		started: true,
		logs: [],
	},
	duplicate: {
		status: 200,
		receipt: 'duplicate',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'OK',
		started: false,
		logs: [
			{
				level: 'info',
				message: 'PayPalych Trigger: payment postback PAY-1 SUCCESS was already received',
				metadata: {
					workflowId: 'wf-answers-1',
				},
			},
		],
	},
	unselected: {
		status: 200,
		receipt: 'ignored',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'OK',
		started: false,
		logs: [
			{
				level: 'debug',
				message: 'PayPalych Trigger: payment postback with status FAIL is not selected',
				metadata: {
					workflowId: 'wf-answers-2',
				},
			},
		],
	},
	noToken: {
		status: 500,
		receipt: 'rejected',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: 'The trigger has no API token to verify calls: set it in the PayPalych credential',
		started: false,
		logs: [
			{
				level: 'warn',
				message:
					'PayPalych Trigger refused a payment call (HTTP 500): The trigger has no API token to verify calls: set it in the PayPalych credential',
				metadata: {
					workflowId: 'wf-answers-3',
				},
			},
		],
	},
	redirect: {
		status: 303,
		receipt: 'accepted',
		contentType: null,
		cacheControl: 'no-store',
		retryAfter: null,
		location: 'https://shop.example/thanks',
		body: '',
		started: true,
		logs: [],
	},
	plainPage: {
		status: 200,
		receipt: 'accepted',
		contentType: 'text/html; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: null,
		location: null,
		body: '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Payment failed</title></head><body><h1>Payment failed</h1><p>The payment did not go through. No money was taken; you can try again.</p><p>Order: order-7</p><p>Amount: 10.00 RUB</p></body></html>',
		started: true,
		logs: [],
	},
	unreachable: {
		status: 503,
		receipt: 'retry',
		contentType: 'text/plain; charset=utf-8',
		cacheControl: 'no-store',
		retryAfter: '60',
		location: null,
		body: 'Not confirmed by the service: Payment PAY-1 could not be read from the service (network_error). Try again later.',
		started: false,
		logs: [
			{
				level: 'warn',
				message:
					'PayPalych Trigger asked for a retry of a payment postback (HTTP 503): Not confirmed by the service: Payment PAY-1 could not be read from the service (network_error)',
				metadata: {
					workflowId: 'wf-answers-6',
				},
			},
		],
	},
};

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('the answers of the trigger', () => {
	it('answers each case with the same status, headers, body, run and log line', async () => {
		const out: Record<string, unknown> = {};
		let h = await harness({ event: 'payment' });
		out.forwarded = await transcript(h, form(payment()), { 'X-PayPalych-Event': 'payout' });
		out.garbage = await transcript(h, 'InvId=1', {});
		out.tooLarge = await transcript(h, 'x='.padEnd(70_000, 'y'), {});
		out.forged = await transcript(h, form(payment({}, 'other')));
		out.accepted = await transcript(h, form(payment()));
		out.duplicate = await transcript(h, form(payment()));
		h = await harness({ event: 'payment', paymentStatuses: ['SUCCESS'] });
		out.unselected = await transcript(h, form(payment({ Status: 'FAIL' })));
		h = await harness({ event: 'payment' }, '');
		out.noToken = await transcript(h, form(payment({}, '')));
		h = await harness({ event: 'success', redirectUrl: 'https://shop.example/thanks' });
		out.redirect = await transcript(h, form(redirect()));
		h = await harness({ event: 'fail' });
		out.plainPage = await transcript(h, form(redirect()));
		h = await harness({ event: 'payment', confirmWithApi: true }, TOKEN, 'http://127.0.0.1:9');
		out.unreachable = await transcript(h, form(payment()));
		expect(out).toEqual(EXPECTED);
	});
});
