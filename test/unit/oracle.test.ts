import { describe, expect, it } from 'vitest';

// The two sides of the wire, each written on its own: the contract the nodes and the relay use
// (nodes/shared, compiled) and the sandbox, the test oracle, which imports nothing of it. This
// test holds their rules against each other so that neither drifts from the other unnoticed.
import * as contract from '../../dist/nodes/shared/index.js';
import { createHash } from 'node:crypto';
import { paymentPostback } from '../../sandbox/src/billing.ts';
import { chargebackPostback, refundPostback } from '../../sandbox/src/refunds.ts';
import { formatDateTime, parseYmd } from '../../sandbox/src/dates.ts';
import {
	ERROR_TABLE,
	FACTS_ERRORS,
	unauthenticated,
	unauthorizedAction,
	validationError,
	type DocumentEndpoint as Endpoint,
} from '../../sandbox/src/errors.ts';
import * as model from '../../sandbox/src/model.ts';
import { format2, MAX_CENTS, parseAmount } from '../../sandbox/src/money.ts';
import { createPayouts, payoutPostback } from '../../sandbox/src/payouts.ts';
import { payoutView } from '../../sandbox/src/views.ts';
import { postbackJson } from '../../sandbox/src/postbacks.ts';
import { State } from '../../sandbox/src/state.ts';
import { ENDPOINT_ERRORS } from '../helpers/endpoint-errors.ts';

/**
 * Intended differences of the error tables: error keys the sandbox answers on an endpoint whose
 * list in the interface document (ENDPOINT_ERRORS) does not name them. Nothing
 * else may differ; an entry here that no longer differs fails too.
 */
const SANDBOX_ONLY_ERRORS: ReadonlyArray<{
	endpoints: Endpoint[];
	key: string;
	status: number;
	why: string;
}> = [
	{
		endpoints: ['payout/personal/create', 'payout/regular/create'],
		key: 'too_many_payouts',
		status: 400,
		why: 'docs/developer/service.md (unconfirmed): at most 1000 payouts per request; the document does not list it, so the contract lists it only in its catalogue (a sentence for the merchant), not per endpoint',
	},
	{
		endpoints: [
			'bill/payments',
			'bill/status',
			'bill/search',
			'payment/status',
			'merchant/balance',
			'payout/status',
			'payout/search',
			'payout/dictionaries/sbp_banks',
		],
		key: 'general_error',
		status: 500,
		why: 'the service can fail on any endpoint; the document lists general_error only on the create and toggle calls',
	},
	{
		endpoints: [
			'bill/status',
			'bill/search',
			'payment/status',
			'payout/search',
			'payout/dictionaries/sbp_banks',
		],
		key: 'merchant_not_found',
		status: 403,
		why: 'every authenticated endpoint looks the merchant up; the document lists the key only where it spelt the check out',
	},
	{
		endpoints: ['bill/search', 'payout/search'],
		key: 'merchant_banned',
		status: 403,
		why: 'as merchant_not_found: the document gives no error list for the two searches',
	},
	{
		endpoints: ['payout/search'],
		key: 'merchant_subscription_inactive',
		status: 403,
		why: 'payout endpoints check the subscription (payout/status lists it); the document gives no list for payout/search',
	},
	{
		endpoints: ['payout/search'],
		key: 'merchant_subscription_not_found',
		status: 403,
		why: 'as merchant_subscription_inactive',
	},
];

/**
 * Keys the sandbox answers beyond the document (FACTS_ERRORS) that the contract's catalogue may
 * not explain yet. Nothing checks that they are still missing: the catalogue may learn them.
 */
const KEYS_BEYOND_CATALOGUE: Readonly<Record<string, string>> = {
	refunds_not_enabled:
		"the sandbox's name for the refusal when the refund API is not switched on (the reference names none)",
	refund_not_found: "the sandbox's name for an unknown refund id on refund/status",
	refund_amount_exceeded:
		"the sandbox's name for a refund above the refundable amount (amount minus refunded)",
	refund_not_allowed:
		"the sandbox's name for a refund of a payment that took no money (FAIL, PROCESS)",
};

/** The keys that are not `api:error.*` keys: answered by dedicated sandbox functions, checked below. */
const SPECIAL_KEYS = new Set([
	contract.UNAUTHENTICATED_KEY,
	contract.UNAUTHORIZED_KEY,
	contract.VALIDATION_KEY,
]);

function contractTable(endpoint: Endpoint): Record<string, number> {
	const entries = ENDPOINT_ERRORS[`${contract.API_PREFIX}/${endpoint}`];
	if (!entries) throw new Error(`the contract has no error list for ${endpoint}`);
	const table: Record<string, number> = {};
	for (const [status, key] of entries) {
		if (SPECIAL_KEYS.has(key)) continue;
		table[key.replace(/^api:error\./, '')] = status;
	}
	return table;
}

function allowed(endpoint: Endpoint): Record<string, number> {
	const table: Record<string, number> = {};
	for (const entry of SANDBOX_ONLY_ERRORS) {
		if (entry.endpoints.includes(endpoint)) table[entry.key] = entry.status;
	}
	return table;
}

const sorted = <T>(list: readonly T[]) => [...list].sort();

describe('oracle: the sandbox keeps the contract', () => {
	describe('error tables', () => {
		const endpoints = Object.keys(ERROR_TABLE) as Endpoint[];

		it("cover the same endpoints: the document's in both tables, the ones beyond it in the facts table", () => {
			const contractEndpoints = Object.values(contract.ENDPOINTS).map((endpoint) =>
				endpoint.path.replace(`${contract.API_PREFIX}/`, ''),
			);
			// Every endpoint the sandbox answers is in the contract's table, and the other way round.
			expect(sorted(Object.keys(FACTS_ERRORS))).toEqual(sorted(contractEndpoints));
			// The document's endpoints keep the document's error lists.
			expect(sorted(Object.keys(ENDPOINT_ERRORS))).toEqual(
				sorted(endpoints.map((endpoint) => `${contract.API_PREFIX}/${endpoint}`)),
			);
		});

		it("the keys beyond the document (docs/developer/service.md) never change a document key's status, and the contract explains them or they are listed here", () => {
			for (const [endpoint, table] of Object.entries(FACTS_ERRORS)) {
				const documented = (ERROR_TABLE as Record<string, Record<string, number>>)[endpoint] ?? {};
				for (const [key, status] of Object.entries(table)) {
					if (key in documented) expect(status, `${endpoint} ${key}`).toBe(documented[key]);
					if (!(`api:error.${key}` in contract.ERROR_CATALOGUE))
						expect(KEYS_BEYOND_CATALOGUE, `${endpoint} ${key}`).toHaveProperty(key);
				}
			}
			for (const why of Object.values(KEYS_BEYOND_CATALOGUE))
				expect(why.length).toBeGreaterThan(20);
		});

		for (const endpoint of Object.keys(ERROR_TABLE) as Endpoint[]) {
			it(`${endpoint}: every key with the same status, apart from the allow-list`, () => {
				expect(ERROR_TABLE[endpoint]).toEqual({ ...contractTable(endpoint), ...allowed(endpoint) });
			});
		}

		it('the allow-list holds only real differences, and the contract can explain every allowed key', () => {
			for (const entry of SANDBOX_ONLY_ERRORS) {
				expect(entry.why.length).toBeGreaterThan(20);
				for (const endpoint of entry.endpoints) {
					expect(
						contractTable(endpoint),
						`${endpoint} ${entry.key} is in the contract now: drop it from the allow-list`,
					).not.toHaveProperty(entry.key);
					expect(ERROR_TABLE[endpoint][entry.key], `${endpoint} ${entry.key}`).toBe(entry.status);
				}
				expect(contract.ERROR_CATALOGUE).toHaveProperty(`api:error.${entry.key}`);
			}
		});

		it('every sandbox key is in the contract catalogue, so the node explains every error the oracle gives', () => {
			const keys = new Set(Object.values(ERROR_TABLE).flatMap((table) => Object.keys(table)));
			for (const key of keys)
				expect(contract.ERROR_CATALOGUE, key).toHaveProperty(`api:error.${key}`);
		});

		it('the answers without an api:error key read back as the contract says', () => {
			const cases: Array<[ReturnType<typeof unauthenticated>, string, number]> = [
				[unauthenticated(), contract.UNAUTHENTICATED_KEY, 401],
				[unauthorizedAction(), contract.UNAUTHORIZED_KEY, 403],
				[
					validationError({ amount: ['The amount field is required.'] }),
					contract.VALIDATION_KEY,
					422,
				],
			];
			for (const [answer, key, status] of cases) {
				expect(answer.status).toBe(status);
				expect(contract.describeApiError(answer.status, answer.body).key).toBe(key);
			}
			// Where the document gives these keys a status, it is the sandbox's.
			for (const [path, entries] of Object.entries(ENDPOINT_ERRORS)) {
				for (const [status, key] of entries) {
					const expected = cases.find(([, special]) => special === key);
					if (expected) expect(status, `${path} ${key}`).toBe(expected[2]);
				}
			}
			for (const table of Object.values(ERROR_TABLE)) {
				for (const [key, status] of Object.entries(table)) {
					expect(
						contract.describeApiError(status, { success: false, message: `api:error.${key}` }).key,
					).toBe(`api:error.${key}`);
				}
			}
		});
	});

	describe('statuses and enums', () => {
		it('bill, payment and payout statuses', () => {
			expect(model.BILL_STATUSES).toEqual(contract.BILL_STATUSES);
			expect(model.BILL_STATUSES).toEqual(contract.PAYMENT_STATUSES);
			expect(model.PAYOUT_STATUSES).toEqual(contract.PAYOUT_STATUSES);
		});

		it('postback statuses and which of them count as paid', () => {
			expect(sorted(model.PAYMENT_POSTBACK_STATUSES)).toEqual(
				sorted(contract.PAYMENT_POSTBACK_STATUSES),
			);
			expect(sorted(model.PAYOUT_POSTBACK_STATUSES)).toEqual(
				sorted(contract.PAYOUT_POSTBACK_STATUSES),
			);
			expect(sorted(model.PAID_STATUSES)).toEqual(sorted(contract.PAID_STATUSES));
			for (const status of model.BILL_STATUSES)
				expect(model.isPaidStatus(status), status).toBe(contract.isPaidStatus(status));
		});

		it('currencies, bill types, payment methods and payout directions', () => {
			expect(model.CURRENCIES).toEqual(contract.CURRENCIES_IN);
			expect(model.BILL_TYPES).toEqual(contract.BILL_TYPES);
			expect(model.PAYMENT_METHODS).toEqual(contract.PAYMENT_METHODS);
			expect(model.REGULAR_DIRECTIONS).toEqual(contract.PAYOUT_ACCOUNT_TYPES);
		});
	});

	describe('signatures and postbacks', () => {
		const tokens = ['72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT', 'plain', 'токен|ü'];

		it('the same signature formulas', () => {
			for (const token of tokens) {
				for (const [amount, id] of [
					['18.54', 'order-7'],
					['0.01', ''],
					['99999999.99', 'заказ/1 & x=y'],
				]) {
					expect(model.paymentSignature(amount, id, token)).toBe(
						contract.signPayment(amount, id, token),
					);
					expect(model.payoutSignature(amount, id, token)).toBe(
						contract.signPayout(amount, id, token),
					);
				}
			}
		});

		// A merchant as the sandbox makes them, signing with the first token.
		const merchant = (liveExtras: boolean): model.Merchant => {
			const state = new State({ deliver: () => undefined, autoAdvanceMs: 0, liveExtras });
			return state.createMerchant({ id: 'M1', token: tokens[0] });
		};
		const bill: model.Bill = {
			losePostback: false,
			id: 'B1',
			merchantId: 'M1',
			shopId: 'S1',
			amount: 1800,
			type: 'NORMAL',
			currency: 'RUB',
			orderId: 'order-18',
			description: null,
			custom: 'c=1',
			name: null,
			payerPaysCommission: true,
			paymentMethod: null,
			status: 'SUCCESS',
			active: true,
			createdAt: 0,
		};

		it('a sandbox payment postback (with and without live extras) passes the contract for every status it sends', () => {
			for (const liveExtras of [false, true]) {
				for (const status of model.PAYMENT_POSTBACK_STATUSES) {
					const payment: model.Payment = {
						id: 'T1',
						billId: 'B1',
						merchantId: 'M1',
						status,
						amount: 1854,
						payerCommission: 54,
						received: 1800,
						commission: 54,
						method: 'SBP',
						fromCard: '+79*****1234',
						currency: 'RUB',
						createdAt: 0,
					};
					const fields = paymentPostback(bill, payment, merchant(liveExtras));
					for (const field of contract.POSTBACK_RULES.payment.required)
						expect(fields, field).toHaveProperty(field);
					expect(contract.verifyPostback('payment', fields, tokens[0])).toMatchObject({ ok: true });
					expect(contract.POSTBACK_RULES.payment.statuses).toContain(fields.Status);
				}
			}
		});

		it('a sandbox payout postback passes the contract for every status it sends', () => {
			for (const status of model.PAYOUT_POSTBACK_STATUSES) {
				const payout: model.Payout = {
					id: 'P1',
					merchantId: 'M1',
					orderId: null,
					kind: 'regular',
					status,
					amount: 100000,
					commission: 3000,
					accountType: 'SBP',
					accountIdentifier: '+79001234567',
					network: null,
					currency: 'RUB',
					accountCurrency: 'RUB',
					accountAmount: 103000,
					accountCommission: 3000,
					recipientPays: false,
					errorCode: null,
					errorMessage: null,
					createdAt: 0,
				};
				const fields = payoutPostback(payout, merchant(false));
				for (const field of contract.POSTBACK_RULES.payout.required)
					expect(fields, field).toHaveProperty(field);
				expect(contract.verifyPostback('payout', fields, tokens[0])).toMatchObject({ ok: true });
				expect(contract.POSTBACK_RULES.payout.statuses).toContain(fields.Status);
			}
		});

		it('every payout the live profile makes (crypto in USDT, Steam, either side paying the fee, any balance) posts what the contract verifies and its record confirms', () => {
			const state = new State({ deliver: () => undefined, autoAdvanceMs: 0, liveExtras: false });
			const m = state.createMerchant({ id: 'M1', token: tokens[0] });
			m.balances.USD.available = 1_000_000;
			const kinds: Array<[model.AccountKind, string]> = [
				['CRYPTO', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'],
				['STEAM', 'ivan_petrov'],
				['SBP', '79001234567'],
			];
			for (const [accountType, accountIdentifier] of kinds) {
				for (const currency of model.BALANCE_CURRENCIES) {
					for (const recipientPays of [false, true]) {
						const [payout] = createPayouts(state, m, [123_45], {
							orderId: null,
							kind: 'regular',
							accountType,
							accountIdentifier,
							terms: { currency, accountCurrency: 'USD', recipientPays },
						});
						for (const status of model.PAYOUT_POSTBACK_STATUSES) {
							const fields = payoutPostback({ ...payout, status }, m);
							expect(contract.verifyPostback('payout', fields, tokens[0])).toMatchObject({
								ok: true,
							});
							const record = payoutView(
								{ ...payout, status },
								{ liveExtras: false, profile: 'live' },
							);
							expect(contract.confirmPayout(fields, record), `${currency} ${status}`).toEqual({
								ok: true,
							});
						}
					}
				}
			}
		});

		// Refund and chargeback postbacks (docs/developer/service.md): checked against the contract
		// once it has rules for them (nodes/shared), and against the formulas written out here
		// meanwhile.
		const rules = contract.POSTBACK_RULES as Record<string, unknown>;
		it('a sandbox refund and chargeback postback carry the signatures docs/developer/service.md gives (and pass the contract where it has rules for them)', () => {
			const state = new State({ deliver: () => undefined, autoAdvanceMs: 0, liveExtras: false });
			const m = state.createMerchant({ id: 'M1', token: tokens[0] });
			const refund = refundPostback(
				{
					id: 'R1',
					merchantId: 'M1',
					paymentId: 'T1',
					billId: 'B1',
					orderId: null,
					kind: 'partial',
					amount: 1050,
					currency: 'RUB',
					status: 'SUCCESS',
					createdAt: 0,
				},
				bill,
				m,
			);
			expect(refund.SignatureValue).toBe(
				createHash('md5').update(`10.50:RUB:B1:T1:R1:${tokens[0]}`).digest('hex').toUpperCase(),
			);
			const chargeback = chargebackPostback(
				{
					id: 'C1',
					merchantId: 'M1',
					paymentId: 'T1',
					billId: 'B1',
					amount: 1050,
					currency: 'RUB',
					status: 'SUCCESS',
					createdAt: 0,
				},
				bill,
				m,
			);
			expect(chargeback.SignatureValue).toBe(
				createHash('md5').update(`B1:T1:C1:${tokens[0]}`).digest('hex').toUpperCase(),
			);
			for (const [kind, fields] of [
				['refund', refund],
				['chargeback', chargeback],
			] as const) {
				if (!(kind in rules)) continue;
				const verify = contract.verifyPostback as (
					event: string,
					fields: Record<string, string>,
					token: string,
				) => { ok: boolean };
				expect(verify(kind, fields, tokens[0]), kind).toMatchObject({ ok: true });
			}
		});

		it("the spec profile's JSON postbacks read back to the same fields and verify", () => {
			const payment: model.Payment = {
				id: 'T1',
				billId: 'B1',
				merchantId: 'M1',
				status: 'SUCCESS',
				amount: 1850,
				payerCommission: 0,
				received: 1795,
				commission: 55,
				method: 'BANK_CARD',
				fromCard: '220070******1234',
				currency: 'RUB',
				createdAt: 0,
			};
			const payout: model.Payout = {
				id: 'P1',
				merchantId: 'M1',
				orderId: null,
				kind: 'personal',
				status: 'FAIL',
				amount: 10000,
				commission: 1200,
				accountType: 'BANK_CARD',
				accountIdentifier: '220070******1234',
				network: null,
				currency: 'RUB',
				accountCurrency: 'RUB',
				accountAmount: 11200,
				accountCommission: 1200,
				recipientPays: false,
				errorCode: null,
				errorMessage: null,
				createdAt: 0,
			};
			const cases = [
				['payment', paymentPostback(bill, payment, merchant(true))],
				['payout', payoutPostback(payout, merchant(false))],
			] as const;
			for (const [kind, fields] of cases) {
				const json = postbackJson(fields);
				const parsed = contract.parsePostbackBody(json, 'application/json');
				expect(parsed).toEqual({ ok: true, fields });
				expect(contract.verifyPostback(kind, fields, tokens[0])).toMatchObject({ ok: true });
			}
			// The amount is a JSON number in the text that was signed.
			expect(postbackJson(cases[0][1])).toContain('"OutSum":18.50');
		});
	});

	describe('money', () => {
		it('the same largest amount, decimal(10,2)', () => {
			expect(format2(MAX_CENTS)).toBe(contract.MAX_AMOUNT);
		});

		it('what the node sends, the sandbox reads as the same cents; what the sandbox refuses, the node refuses first', () => {
			const inputs = [
				'1',
				'0.01',
				'10.5',
				'10.50',
				'10.500',
				'0010.10',
				'99999999.99',
				'100000000',
				'99999999.999',
				'0',
				'0.00',
				'-5',
				'10.123',
				'abc',
				'1e3',
				' 7.1 ',
				'.5',
				'5.',
			];
			for (const input of inputs) {
				const node = contract.normalizeAmount(input);
				const service = parseAmount(input);
				if (node.ok) {
					const sent = parseAmount(node.value);
					expect(sent, `${input} sent as ${node.value}`).toEqual({ ok: true, cents: node.cents });
					expect(format2(node.cents)).toBe(node.value);
				}
				if (!service.ok && service.reason !== 'not_positive')
					expect(node.ok, `${input}: the service refuses it (${service.reason})`).toBe(false);
				if (service.ok && node.ok) expect(node.cents, input).toBe(service.cents);
			}
		});
	});

	describe('dates', () => {
		it('search days: the same real dates accepted and refused', () => {
			for (const day of [
				'2024-02-29',
				'2023-02-29',
				'2024-12-31',
				'2024-13-01',
				'2024-04-31',
				'2024-1-01',
				'0999-01-01',
			]) {
				expect(parseYmd(day) !== null, day).toBe(contract.toYmd(day).ok);
			}
		});

		it('datetimes written as Y-m-d H:i:s in UTC', () => {
			for (const ms of [0, Date.UTC(2024, 1, 29, 23, 59, 59), Date.UTC(2031, 11, 31, 0, 0, 1)]) {
				const text = formatDateTime(ms);
				expect(text).toMatch(contract.SERVICE_DATETIME);
				expect(text).toBe(contract.formatServiceDateTime(new Date(ms)));
			}
		});
	});
});
