// What the trigger's suites share: hand-made postbacks and redirects signed by a rule written
// out by hand, a trigger harness per test, and the check that the token never leaks.
import { createHash } from 'node:crypto';
import { afterAll, afterEach, expect } from 'vitest';
import { startTrigger } from '../helpers/trigger-harness.ts';
import { KEY_HASH_WIDTH } from '../../dist/nodes/PayPalychTrigger/memory.js';
import {
	startWebhookHarness,
	type LogEntry,
	type WebhookHarness,
} from '../helpers/webhook-harness.ts';

// The signature rule written out by hand (an oracle independent of the module under test).
export const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
// How the memory stores a key, written out by hand: 12 characters of its SHA-256 in base64url.
export const hashOf = (key: string) =>
	createHash('sha256').update(key, 'utf8').digest('base64url').slice(0, KEY_HASH_WIDTH);
export const TOKEN = '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT';
export const TYPE = 'n8n-nodes-paypalych.payPalychTrigger';
export const FORM = 'application/x-www-form-urlencoded';

/** The harnesses of the running test, closed after it. */
export const open: WebhookHarness[] = [];
const allLogs: LogEntry[] = [];
const allAnswers: string[] = [];

/**
 * These tests send hand-made postbacks to exercise reading, verifying, filtering and dedupe, so
 * confirmation with the API is off unless a test turns it on; test/trigger/confirm.test.ts covers
 * confirmation against the sandbox.
 */
export async function harness(
	parameters: Record<string, unknown>,
	extra: Partial<Parameters<typeof startWebhookHarness>[0]> = {},
) {
	const h = await startTrigger(
		{ confirmWithApi: false, ...parameters },
		{ apiToken: TOKEN, baseUrl: 'https://pal24.pro' },
		extra,
	);
	open.push(h);
	return h;
}

/**
 * Closes the harnesses of each test after it, and checks once at the end of the file that no answer
 * and no log line ever carried the token.
 */
export function useTriggerHarness(): void {
	afterEach(async () => {
		for (const h of open.splice(0)) {
			allLogs.push(...h.logs.splice(0));
			await h.close();
		}
	});

	afterAll(() => {
		// No answer and no log line ever carries the token.
		const text = JSON.stringify(allLogs) + allAnswers.join('\n');
		expect(text).not.toContain(TOKEN);
		expect(text).not.toContain('oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT');
	});
}

export async function post(
	url: string,
	body: string,
	contentType = FORM,
	extraHeaders: Record<string, string> = {},
) {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': contentType, ...extraHeaders },
		body,
		redirect: 'manual',
	});
	const text = await res.text();
	allAnswers.push(text);
	return { status: res.status, text, headers: res.headers };
}

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

export function payment(overrides: Record<string, string> = {}, token = TOKEN) {
	const base: Record<string, string> = {
		InvId: 'order-1001',
		OutSum: '18.50',
		Commission: '0.55',
		Currency: 'RUB',
		CurrencyIn: 'RUB',
		TrsId: 'PAY-7f3a',
		Status: 'SUCCESS',
		custom: 'x&y z',
		BalanceAmount: '17.95',
		PayerEmail: 'a@b.c',
		...overrides,
	};
	base.SignatureValue = overrides.SignatureValue ?? md5(`${base.OutSum}:${base.InvId}:${token}`);
	return base;
}

export function payout(overrides: Record<string, string> = {}, token = TOKEN) {
	const base: Record<string, string> = {
		TrsId: 'PO-1',
		Amount: '1000.00',
		IsAuto: 'false',
		Status: 'SUCCESS',
		Currency: 'RUB',
		Commission: '15.00',
		AccountType: 'BANK_CARD',
		AccountNumber: '220000******0000',
		BalanceAmount: '1015.00',
		BalanceCommission: '15.00',
		BalanceCurrency: 'RUB',
		CommissionApplyType: 'sender',
		...overrides,
	};
	base.SignatureValue = overrides.SignatureValue ?? md5(`${base.Amount}:${base.TrsId}:${token}`);
	return base;
}

export function redirect(overrides: Record<string, string> = {}, token = TOKEN) {
	const base: Record<string, string> = {
		InvId: 'order-1001',
		OutSum: '18.50',
		CurrencyIn: 'RUB',
		custom: 'c1',
		...overrides,
	};
	base.SignatureValue = overrides.SignatureValue ?? md5(`${base.OutSum}:${base.InvId}:${token}`);
	return base;
}
