#!/usr/bin/env node
/** paypalych-sandbox: start the sandbox and print one JSON line with the demo merchant. */
import { parseArgs } from 'node:util';
import { startSandbox } from './index.ts';
import { ERROR_FORMS, PROFILES, TRS_ID_KINDS, type Profile } from './model.ts';

const { values } = parseArgs({
	options: {
		port: { type: 'string' },
		host: { type: 'string' },
		token: { type: 'string' },
		'time-factor': { type: 'string' },
		'public-url': { type: 'string' },
		'auto-advance-ms': { type: 'string' },
		'live-extras': { type: 'boolean' },
		profile: { type: 'string' },
		'trs-id': { type: 'string' },
		'error-form': { type: 'string' },
		'require-shop-id': { type: 'boolean' },
		'new-payment-fields': { type: 'boolean' },
		'hide-bill-order-id': { type: 'boolean' },
		'payments-page-size': { type: 'string' },
		refunds: { type: 'boolean' },
		help: { type: 'boolean', short: 'h' },
	},
	strict: true,
});

if (values.help) {
	process.stdout.write(
		[
			'paypalych-sandbox [--port 8787] [--host 127.0.0.1] [--token T] [--time-factor 1] [--public-url URL] [--auto-advance-ms 0] [--live-extras] [--profile live|spec]',
			'                  [--trs-id payment|bill] [--error-form message|error_code] [--require-shop-id]',
			'                  [--new-payment-fields] [--hide-bill-order-id] [--payments-page-size 15] [--refunds]',
			'',
			'  --profile live|spec  (SANDBOX_PROFILE) how the sandbox answers where the interface document',
			'                       leaves a choice open. live (default): what public integrations see:',
			'                       order_id on bills with --live-extras, a cursor only with per_page,',
			'                       inclusive finish_date, UTC dates, payment amount = OutSum, form',
			'                       postbacks. spec: no order_id on bills, Laravel pages (links/meta,',
			'                       ?page=N, per_page ignored), exclusive finish_date, Moscow dates,',
			'                       amount without the payer-paid commission, JSON postbacks.',
			'                       Per merchant: PATCH /_sandbox/merchants/:id {"profile": "spec"}.',
			'',
			'  Answers the live service is seen to give beyond the document (either profile; per',
			'  merchant in PATCH /_sandbox/merchants/:id under the name in brackets):',
			'  --trs-id payment|bill     (SANDBOX_TRS_ID, trsId) what TrsId in payment postbacks names',
			'  --error-form message|error_code  (SANDBOX_ERROR_FORM, errorForm) where errors carry their key',
			'  --require-shop-id         (SANDBOX_REQUIRE_SHOP_ID=1, requireShopId) bill/search needs shop_id',
			'  --new-payment-fields      (SANDBOX_NEW_PAYMENT_FIELDS=1, newPaymentFields) payments without',
			'                            amount_received, with commission, account_amount, refunded_amount',
			'  --hide-bill-order-id      (SANDBOX_HIDE_BILL_ORDER_ID=1, billOrderId: false) no order_id on',
			'                            bills in the live profile (spec never shows it)',
			'  --payments-page-size N    (SANDBOX_PAYMENTS_PAGE_SIZE, paymentsPageSize) bill/payments rows',
			'                            per page without per_page (default 15)',
			'  --refunds                 (SANDBOX_REFUNDS=1, refunds) the refund API switched on',
			'',
		].join('\n'),
	);
	process.exit(0);
}

const env = process.env;
function number(name: string, text: string | undefined, fallback: number): number {
	if (text === undefined || text === '') return fallback;
	const value = Number(text);
	if (!Number.isFinite(value) || value < 0) {
		process.stderr.write(`paypalych-sandbox: ${name} must be a non-negative number, got ${text}\n`);
		process.exit(2);
	}
	return value;
}

const profile = values.profile ?? env['SANDBOX_PROFILE'] ?? 'live';
if (!(PROFILES as readonly string[]).includes(profile)) {
	process.stderr.write(
		`paypalych-sandbox: --profile (SANDBOX_PROFILE) must be one of ${PROFILES.join(', ')}, got ${profile}\n`,
	);
	process.exit(2);
}

function oneOf(name: string, text: string, allowed: readonly string[]): string {
	if (!allowed.includes(text)) {
		process.stderr.write(
			`paypalych-sandbox: ${name} must be one of ${allowed.join(', ')}, got ${text}\n`,
		);
		process.exit(2);
	}
	return text;
}
const flag = (value: boolean | undefined, name: string) => value ?? env[name] === '1';
const trsId = oneOf(
	'--trs-id (SANDBOX_TRS_ID)',
	values['trs-id'] ?? env['SANDBOX_TRS_ID'] ?? 'payment',
	TRS_ID_KINDS,
);
const errorForm = oneOf(
	'--error-form (SANDBOX_ERROR_FORM)',
	values['error-form'] ?? env['SANDBOX_ERROR_FORM'] ?? 'message',
	ERROR_FORMS,
);
const pageSize = number(
	'--payments-page-size',
	values['payments-page-size'] ?? env['SANDBOX_PAYMENTS_PAGE_SIZE'],
	15,
);
if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
	process.stderr.write(
		'paypalych-sandbox: --payments-page-size must be a whole number from 1 to 1000\n',
	);
	process.exit(2);
}

const sandbox = await startSandbox({
	port: number('--port', values.port ?? env['SANDBOX_PORT'], 8787),
	host: values.host ?? env['SANDBOX_HOST'] ?? '127.0.0.1',
	token: values.token ?? env['SANDBOX_TOKEN'] ?? undefined,
	timeFactor: number('--time-factor', values['time-factor'] ?? env['SANDBOX_TIME_FACTOR'], 1) || 1,
	publicUrl: values['public-url'] ?? env['SANDBOX_PUBLIC_URL'] ?? undefined,
	autoAdvanceMs: number(
		'--auto-advance-ms',
		values['auto-advance-ms'] ?? env['SANDBOX_AUTO_ADVANCE_MS'],
		0,
	),
	liveExtras: values['live-extras'] ?? env['SANDBOX_LIVE_EXTRAS'] === '1',
	profile: profile as Profile,
	trsId: trsId as (typeof TRS_ID_KINDS)[number],
	errorForm: errorForm as (typeof ERROR_FORMS)[number],
	requireShopId: flag(values['require-shop-id'], 'SANDBOX_REQUIRE_SHOP_ID'),
	newPaymentFields: flag(values['new-payment-fields'], 'SANDBOX_NEW_PAYMENT_FIELDS'),
	billOrderId: !flag(values['hide-bill-order-id'], 'SANDBOX_HIDE_BILL_ORDER_ID'),
	paymentsPageSize: pageSize,
	refunds: flag(values.refunds, 'SANDBOX_REFUNDS'),
});

process.stdout.write(
	`${JSON.stringify({ url: sandbox.url, token: sandbox.token, shopId: sandbox.shopId, payoutAccountId: sandbox.payoutAccountId, merchantId: sandbox.merchantId, profile: sandbox.profile })}\n`,
);

let closing = false;
const stop = () => {
	if (closing) return;
	closing = true;
	sandbox.close().then(
		() => process.exit(0),
		(error: unknown) => {
			process.stderr.write(`paypalych-sandbox: ${String(error)}\n`);
			process.exit(1);
		},
	);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
