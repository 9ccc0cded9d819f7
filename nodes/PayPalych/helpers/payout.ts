import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { formatCents, toCents, type Endpoint } from '../../shared';
import { apiRequest } from '../transport';
import { PAYOUT_KIND, createOnce } from './createOnce';
import { payoutsUnderOrderId } from './payoutLookup';
import { payoutMoneyOptions } from './payoutOptions';
import { inputError } from './validation';

/**
 * Payouts are keyed by an Order ID the workflow gives: the same value for every retry, re-run
 * and duplicate delivery of one intended payout. The node looks the order ID up before paying;
 * the service refuses a second payout with the same order ID. Nothing is derived from item
 * positions, input items or times, which change between runs.
 */
export const ORDER_ID_RULE =
	"The same value for every retry, re-run and duplicate delivery of this payout, and a new value for each payout you mean to make: an invoice or withdrawal number from your system, the eventKey of a PayPalych Trigger ({{ $json.eventKey }}), or sweep-{{ $today.toFormat('yyyy-MM-dd') }} for a daily sweep. The node looks it up first and never pays an order ID twice.";

/** Longest Order ID the node sends. */
export const MAX_ORDER_ID_LENGTH = 100;

/** The Order ID and the Options of the two payout-create operations (each adds its display options). */
export const payoutFields: INodeProperties[] = [
	{
		displayName: 'Order ID',
		name: 'orderId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. withdrawal-{{ $json.requestId }}',
		description:
			"Your own ID of this payout, the same value for every retry, re-run and duplicate delivery, such as a withdrawal number or the trigger's eventKey",
		hint: 'The node never pays one Order ID twice',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'On Existing Payout',
				name: 'onExisting',
				type: 'options',
				default: 'return',
				options: [
					{
						name: 'Return It',
						value: 'return',
						description: 'Output the payout already made under this Order ID and pay nothing',
					},
					{
						name: 'Fail',
						value: 'fail',
						description: 'Stop with an error naming the existing payout, and pay nothing',
					},
				],
				description: 'What to do when a payout with this Order ID already exists',
			},
			...payoutMoneyOptions,
		],
	},
];

/** What one payout request asks for, to compare with a payout that already exists. */
export interface PayoutIntent {
	cents: number;
	amount: string;
	/** What the destination is, for messages: "card 4111…1111", "SBP 79001234567", "payout account A1". */
	label: string;
	/** Whether an existing payout's fields show the same destination; undefined when they cannot tell. */
	sameDestination(payout: IDataObject): boolean | undefined;
}

const digitsOf = (value: unknown) =>
	typeof value === 'string' || typeof value === 'number' ? String(value).replace(/\D/g, '') : '';

function cents(amount: string): number {
	const value = toCents(amount);
	if (value === undefined) throw new Error(`not a checked amount: ${amount}`);
	return value;
}

/** A payout to a saved payout account. Payouts show the account only where the service adds payout_account_id. */
export function accountIntent(amount: string, payoutAccountId: string): PayoutIntent {
	return {
		cents: cents(amount),
		amount,
		label: `payout account ${payoutAccountId}`,
		sameDestination: (payout) =>
			payout.payout_account_id === undefined || payout.payout_account_id === null
				? undefined
				: String(payout.payout_account_id) === payoutAccountId,
	};
}

/**
 * A payout to a card. The service shows the card masked (`411111******1111`): the digits it shows
 * at the start and at the end must be the card's. Messages show the card masked too.
 */
export function cardIntent(amount: string, cardNumber: string): PayoutIntent {
	return {
		cents: cents(amount),
		amount,
		label: `card ${cardNumber.slice(0, 6)}******${cardNumber.slice(-4)}`,
		sameDestination: (payout) => {
			const shown =
				typeof payout.account_identifier === 'string' ? payout.account_identifier.trim() : '';
			if (shown === '') return undefined;
			if (/^\d+$/.test(shown)) return shown === cardNumber;
			const head = /^\d*/.exec(shown)?.[0] ?? '';
			const tail = /\d*$/.exec(shown)?.[0] ?? '';
			return (
				cardNumber.startsWith(head) && cardNumber.endsWith(tail) && head.length + tail.length > 0
			);
		},
	};
}

/** A payout over SBP to a phone (7XXXXXXXXXX) at a bank. */
export function sbpIntent(amount: string, phone: string, bank: string): PayoutIntent {
	return {
		cents: cents(amount),
		amount,
		label: `SBP ${phone} (bank ${bank})`,
		sameDestination: (payout) => {
			const shown = digitsOf(payout.account_identifier);
			if (shown === '') return undefined;
			const same = shown.slice(-10) === phone.slice(-10);
			if (!same || payout.account_bank === undefined || payout.account_bank === null) return same;
			return String(payout.account_bank) === bank;
		},
	};
}

const textOf = (value: unknown) =>
	typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';

/**
 * Whether an identifier the service shows is `value`: the same text, or a masked one
 * (`TR7NHq****Lj6t`) whose visible start and end are the value's. Undefined when none is shown.
 */
function shownAs(shown: string, value: string, ignoreCase: boolean): boolean | undefined {
	if (shown === '') return undefined;
	const [seen, wanted] = ignoreCase ? [shown.toLowerCase(), value.toLowerCase()] : [shown, value];
	if (!seen.includes('*')) return seen === wanted;
	const head = seen.slice(0, seen.indexOf('*'));
	const tail = seen.slice(seen.lastIndexOf('*') + 1);
	return wanted.startsWith(head) && wanted.endsWith(tail) && head.length + tail.length > 0;
}

/** A field the service may show on a payout (its network, its currency): false when it shows another value. */
const notOther = (payout: IDataObject, field: string, value: string) => {
	const shown = textOf(payout[field]).toUpperCase();
	return shown === '' || shown === value.toUpperCase();
};

/**
 * A payout to a crypto wallet on a network, in a currency. The destination is the network and the
 * address (an Ethereum address in any letter case, a Tron address exactly); an existing payout
 * that shows another network or currency is another payout.
 */
export function cryptoIntent(
	amount: string,
	currency: string,
	network: string,
	address: string,
): PayoutIntent {
	return {
		cents: cents(amount),
		amount: `${amount} ${currency}`,
		label: `${network} wallet ${address}`,
		sameDestination: (payout) => {
			if (!notOther(payout, 'account_network', network)) return false;
			if (!notOther(payout, 'currency', currency)) return false;
			return shownAs(textOf(payout.account_identifier), address, network === 'ETH');
		},
	};
}

/** A payout to a Steam account by its login (Steam logins are not case-sensitive), in RUB. */
export function steamIntent(amount: string, login: string): PayoutIntent {
	return {
		cents: cents(amount),
		amount,
		label: `Steam login ${login}`,
		sameDestination: (payout) => {
			if (!notOther(payout, 'currency', 'RUB')) return false;
			return shownAs(textOf(payout.account_identifier), login, true);
		},
	};
}

function describeExisting(payouts: IDataObject[]): string {
	const cents = payouts.reduce((sum, payout) => sum + (toCents(payout.amount) ?? 0), 0);
	const where = [
		...new Set(payouts.map((payout) => String(payout.account_identifier ?? 'an unknown account'))),
	].join(', ');
	const ids = payouts
		.map((payout) => `${String(payout.id)} (${String(payout.status ?? '?')})`)
		.join(', ');
	return `${formatCents(cents)} to ${where}: payout ${ids}`;
}

/**
 * The payouts already made under the order ID when they are this payout (same total, same
 * destination where the service shows it). Another amount or destination is an error naming both.
 */
export function sameIntentOrThrow(
	this: IExecuteFunctions,
	existing: IDataObject[],
	orderId: string,
	intent: PayoutIntent,
	itemIndex: number,
): void {
	const total = existing.reduce((sum, payout) => sum + (toCents(payout.amount) ?? Number.NaN), 0);
	const destinations = existing.map((payout) => intent.sameDestination(payout));
	if (total === intent.cents && !destinations.includes(false)) return;
	throw new NodeOperationError(
		this.getNode(),
		`Order ID ${orderId} already has a payout of ${describeExisting(existing)}; this request is ${intent.amount} to ${intent.label}`,
		{
			itemIndex,
			description:
				'Nothing was paid. An order ID names one payout: give this payout its own Order ID, or correct the amount or destination if it is the same payout.',
		},
	);
}

/** The Order ID parameter: required, trimmed, bounded, printable. */
export function checkOrderId(this: IExecuteFunctions, itemIndex: number): string {
	const raw = this.getNodeParameter('orderId', itemIndex, '') as unknown;
	const value = typeof raw === 'string' || typeof raw === 'number' ? String(raw).trim() : '';
	const node = this.getNode();
	if (value === '') {
		throw inputError(node, 'Order ID', 'is required', itemIndex, ORDER_ID_RULE);
	}
	if (value.length > MAX_ORDER_ID_LENGTH) {
		throw inputError(
			node,
			'Order ID',
			`must be at most ${MAX_ORDER_ID_LENGTH} characters (got ${value.length})`,
			itemIndex,
		);
	}
	if (Array.from(value).some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)) {
		throw inputError(node, 'Order ID', 'must not contain control characters', itemIndex);
	}
	return value;
}

/**
 * Creates a payout at most once per order ID (createOnce.ts does the steps; this is the payout's
 * part). The service refuses a second payout under one order ID, so what it finds is identified:
 * 1. The order ID is looked up. A payout under it with the same amount and destination is
 *    returned (already_existed: true), or an error with On Existing Payout = Fail; another amount
 *    or destination is an error naming both. Nothing is paid. With `dryRun`, its output instead.
 * 2. Otherwise (once `beforeCreate` has not refused) it is created with the order ID. Taken, no
 *    answer or a 5xx: the order ID is looked up again.
 * 3. Each payout of a split answer is its own entry. An answer without a payout list is an error
 *    telling to look the order ID up: money may have moved.
 */
export async function createPayoutOnce(
	this: IExecuteFunctions,
	itemIndex: number,
	endpoint: Endpoint,
	body: Record<string, string>,
	intent: PayoutIntent,
	beforeCreate?: () => Promise<void>,
	dryRun?: (existing: IDataObject[] | undefined) => Promise<IDataObject>,
): Promise<IDataObject[]> {
	const orderId = checkOrderId.call(this, itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const lookUp = async () => await payoutsUnderOrderId.call(this, orderId, intent.cents, itemIndex);
	const checked = (payouts: IDataObject[]) => {
		sameIntentOrThrow.call(this, payouts, orderId, intent, itemIndex);
		return payouts;
	};
	return await createOnce.call(this, itemIndex, {
		kind: PAYOUT_KIND,
		orderId,
		onExisting: options.onExisting === 'fail' ? 'fail' : 'return',
		find: async () => {
			const found = await lookUp();
			return found && { records: checked(found), identified: true };
		},
		describe: describeExisting,
		request: `${intent.amount} to ${intent.label}`,
		dryRun: dryRun && (async (found) => await dryRun(found?.records)),
		beforeCreate,
		create: async () =>
			await apiRequest.call(this, endpoint, { body: { ...body, order_id: orderId }, itemIndex }),
		recordsOf: (answer) => {
			const payouts = Array.isArray(answer.data) ? (answer.data as unknown[]) : [];
			const valid =
				payouts.length > 0 &&
				payouts.every(
					(payout) =>
						typeof payout === 'object' &&
						payout !== null &&
						(payout as IDataObject).id !== undefined,
				);
			return valid ? (payouts as IDataObject[]) : undefined;
		},
		noRecords: {
			missing: 'the list of payouts',
			lookUp: `Look Order ID ${orderId} up (Payout › Get by order ID)`,
		},
		recover: async () => {
			const after = await lookUp().catch(() => undefined);
			return after && checked(after);
		},
		summary: () => ({
			currency: (body.currency ?? 'RUB').toUpperCase(),
			where: `to ${intent.label}`,
		}),
	});
}
