import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	ENDPOINTS,
	SERVICE_TIME_ZONE,
	canonicalStatus,
	createdWithin,
	dateIn,
	formatCents,
	isKnownTimeZone,
	normalizeAmount,
	toCents,
	widenedDates,
	type Endpoint,
} from '../../shared';
import { apiRequest } from '../transport';
import { listAll } from './pagination';
import { PAYOUT_KIND, requireToolOrderId } from './createOnce';
import { legacyPayoutLimitOptions, limitInputs, payoutLimitFields } from './limits';
import { checkOrderId, createPayoutOnce, payoutFields, type PayoutIntent } from './payout';
import { inputError } from './validation';

/**
 * Guardrails of the payout-create operations: Dry Run, Max Amount, Daily Limit, and the rules that
 * apply when an AI agent calls the node as a tool. Every check here runs before a create request
 * is sent; a refused payout sends nothing.
 */

/** The option this module adds to the payout-create Options collection, first. */
export const dryRunOption: INodeProperties = {
	displayName: 'Dry Run',
	name: 'dryRun',
	type: 'boolean',
	default: false,
	description: 'Whether to check everything and output what would be paid, without paying anything',
};

export interface Guardrails {
	dryRun: boolean;
	maxCents?: number;
	dailyCents?: number;
	/** The IANA time zone Daily Limit counts its day in. */
	timeZone: string;
}

export function limitOf(
	this: IExecuteFunctions,
	value: unknown,
	field: string,
	itemIndex: number,
): number | undefined {
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))
		return undefined;
	const checked = normalizeAmount(value);
	if (!checked.ok) {
		throw inputError(
			this.getNode(),
			field,
			`${checked.message} (got ${JSON.stringify(value)})`,
			itemIndex,
			'Use a positive amount with at most 2 decimals, such as 10000 or 9999.90, or leave it empty for no limit. Nothing was paid.',
		);
	}
	return checked.cents;
}

/** Time Zone: an IANA time zone this runtime knows; empty is the default (Moscow). */
function timeZoneOf(this: IExecuteFunctions, value: unknown, itemIndex: number): string {
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))
		return SERVICE_TIME_ZONE;
	const zone = typeof value === 'string' ? value.trim() : '';
	if (!isKnownTimeZone(zone)) {
		throw inputError(
			this.getNode(),
			'Time Zone',
			`is not a time zone this n8n knows (got ${JSON.stringify(value)})`,
			itemIndex,
			'Use an IANA time zone name such as Europe/Moscow, Asia/Yekaterinburg or UTC. Nothing was paid.',
		);
	}
	return zone;
}

/**
 * Reads the guardrail options and refuses, before any request, a payout above Max Amount, an
 * unknown Time Zone and (as a tool) a payout without an explicit Order ID.
 */
export function readGuardrails(
	this: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
	cents: number,
	label: string,
	currency = PAYOUT_CURRENCY,
): Guardrails {
	const inputs = limitInputs.call(this, itemIndex, options);
	const maxes = inputs.maxAmount.map(
		(limit) => limitOf.call(this, limit.value, 'Max Amount', itemIndex) as number,
	);
	const dailies = inputs.dailyLimit.map((limit) => ({
		cents: limitOf.call(this, limit.value, 'Daily Limit', itemIndex) as number,
		timeZone: timeZoneOf.call(this, limit.timeZone, itemIndex),
	}));
	// Where a limit is set both as a field and in a saved workflow's Options, the lower one holds.
	const daily = dailies.sort((a, b) => a.cents - b.cents)[0];
	const guard: Guardrails = {
		dryRun: options.dryRun === true,
		maxCents: maxes.length > 0 ? Math.min(...maxes) : undefined,
		dailyCents: daily?.cents,
		timeZone: daily?.timeZone ?? timeZoneOf.call(this, inputs.timeZone, itemIndex),
	};
	requireToolOrderId.call(
		this,
		itemIndex,
		PAYOUT_KIND,
		`${formatCents(cents)} ${currency} to ${label}`,
	);
	if (guard.maxCents !== undefined && cents > guard.maxCents) {
		throw new NodeOperationError(
			this.getNode(),
			`Refused: the payout of ${formatCents(cents)} to ${label} is above Max Amount ${formatCents(guard.maxCents)}`,
			{
				itemIndex,
				description:
					'Nothing was sent to PayPalych. Check the amount, or raise Max Amount if this payout is meant.',
			},
		);
	}
	return guard;
}

/**
 * Payouts whose money went back do not count against the daily limit: FAIL and DECLINED, the two
 * final statuses a payout postback reports as failed or refused. ERROR counts: the document does
 * not say whether its money came back, and a limit that cannot tell must count it (see the README).
 */
export const NOT_COUNTED_PAYOUT_STATUSES: readonly string[] = ['FAIL', 'DECLINED'];

/**
 * Sum of today's payouts (cents) in `currency` on the service, FAIL and DECLINED ones left out.
 * Today is the date in `timeZone`; the service is asked for the day before to the day after and
 * the payouts created today are kept (its `finish_date` may be exclusive, its days may be another
 * zone's). A payout without a currency is counted.
 */
export async function paidToday(
	this: IExecuteFunctions,
	itemIndex: number,
	timeZone: string,
	currency: string,
): Promise<{ day: string; cents: number }> {
	const day = dateIn(timeZone);
	const payouts = await listAll.call(
		this,
		ENDPOINTS.payoutSearch,
		widenedDates(day, day),
		{
			label: 'Daily Limit',
			keep: (payout) => createdWithin(payout, day, day, timeZone),
			incomplete: 'Nothing was paid: Daily Limit cannot be checked without every payout of today.',
		},
		itemIndex,
	);
	let cents = 0;
	for (const payout of payouts) {
		if (NOT_COUNTED_PAYOUT_STATUSES.includes(canonicalStatus(payout.status))) continue;
		const own = typeof payout.currency === 'string' ? payout.currency.trim().toUpperCase() : '';
		if (own !== '' && own !== currency.toUpperCase()) continue;
		const amount = toCents(payout.amount);
		if (amount === undefined) {
			throw new NodeOperationError(
				this.getNode(),
				`Daily Limit cannot be checked: payout ${String(payout.id)} has an amount the node cannot read (${JSON.stringify(payout.amount)})`,
				{ itemIndex, description: 'Nothing was paid.' },
			);
		}
		cents += amount;
	}
	return { day, cents };
}

/**
 * The currency of a payout without its own `currency` field: a payout to a saved account (paid
 * in the account's currency, RUB for the cards and phones of the service). Cards, SBP and Steam
 * are paid in RUB; a crypto payout in its Currency.
 */
export const PAYOUT_CURRENCY = 'RUB';

/** Refuses the payout when today's payouts plus this one exceed Daily Limit; returns today's figure. */
export async function checkDailyLimit(
	this: IExecuteFunctions,
	guard: Guardrails,
	cents: number,
	label: string,
	itemIndex: number,
	currency = PAYOUT_CURRENCY,
): Promise<IDataObject> {
	if (guard.dailyCents === undefined) return {};
	const today = await paidToday.call(this, itemIndex, guard.timeZone, currency);
	const total = today.cents + cents;
	if (total > guard.dailyCents) {
		throw new NodeOperationError(
			this.getNode(),
			`Refused: Daily Limit ${formatCents(guard.dailyCents)} ${currency} would be exceeded: ${formatCents(today.cents)} paid out today (${today.day}, ${guard.timeZone}) + ${formatCents(cents)} to ${label} = ${formatCents(total)}`,
			{
				itemIndex,
				description:
					'Nothing was sent to PayPalych. FAIL and DECLINED payouts are not counted. Pay the rest tomorrow, or raise Daily Limit if this payout is meant.',
			},
		);
	}
	return {
		paid_today: formatCents(today.cents),
		daily_limit: formatCents(guard.dailyCents),
		daily_limit_day: today.day,
		time_zone: guard.timeZone,
	};
}

/**
 * The available balance in `currency`, in cents, read from merchant/balance; undefined when the
 * service shows no balance in it.
 */
async function availableIn(
	this: IExecuteFunctions,
	itemIndex: number,
	currency: string,
): Promise<number | undefined> {
	const answer = await apiRequest.call(this, ENDPOINTS.merchantBalance, {
		itemIndex,
	});
	const balances = Array.isArray(answer.balances) ? (answer.balances as IDataObject[]) : [];
	const own = balances.find((b) => String(b.currency).trim().toUpperCase() === currency);
	return toCents(own?.balance_available);
}

/**
 * What a Dry Run outputs: what would be paid, and whether anything stands in the way. The balance
 * read is Account Currency's where it is set, else the payout's currency's; whether it covers the
 * amount is told only in the payout's own currency (the node knows no exchange rate: null).
 */
export async function dryRunOutput(
	this: IExecuteFunctions,
	itemIndex: number,
	guard: Guardrails,
	request: { orderId: string; cents: number; label: string; currency: string },
	existing: IDataObject[] | undefined,
): Promise<IDataObject> {
	const limits = existing
		? {}
		: await checkDailyLimit.call(
				this,
				guard,
				request.cents,
				request.label,
				itemIndex,
				request.currency,
			);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const chosen = typeof options.accountCurrency === 'string' ? options.accountCurrency : '';
	const balanceCurrency = (chosen.trim() || request.currency).toUpperCase();
	const available = await availableIn.call(this, itemIndex, balanceCurrency);
	if (available === undefined && balanceCurrency === PAYOUT_CURRENCY) {
		throw new NodeOperationError(this.getNode(), 'Dry Run: the service shows no RUB balance', {
			itemIndex,
			description: 'Nothing was paid.',
		});
	}
	const amount = `${formatCents(request.cents)} ${request.currency}`;
	return {
		dry_run: true,
		would_pay: existing === undefined,
		amount: formatCents(request.cents),
		currency: request.currency,
		destination: request.label,
		order_id: request.orderId,
		order_id_exists: existing !== undefined,
		...(existing ? { existing_payout_ids: existing.map((payout) => String(payout.id)) } : {}),
		balance_available: available === undefined ? null : formatCents(available),
		...(balanceCurrency !== request.currency ? { balance_currency: balanceCurrency } : {}),
		balance_covers:
			available === undefined || balanceCurrency !== request.currency
				? null
				: available >= request.cents,
		...(guard.maxCents !== undefined ? { max_amount: formatCents(guard.maxCents) } : {}),
		...limits,
		summary: existing
			? `Dry run: Order ID ${request.orderId} already has a payout (${existing.map((p) => String(p.id)).join(', ')}); nothing would be paid`
			: `Dry run: would pay ${amount} to ${request.label} under Order ID ${request.orderId}; nothing was sent`,
	};
}

/**
 * The Order ID, the limits and the Options of the payout-create operations: the notice and the
 * limits as fields of their own before the Options, and the Options in the order a merchant
 * reads them (Dry Run, On Existing Payout, then the money options), the limits a saved workflow
 * keeps there hidden at the end.
 */
export const payoutCreateFields: INodeProperties[] = payoutFields.flatMap((field) =>
	field.name === 'options' && field.type === 'collection'
		? [
				...payoutLimitFields,
				{
					...field,
					options: [dryRunOption, ...(field.options ?? []), ...legacyPayoutLimitOptions],
				},
			]
		: [field],
);

/**
 * A payout create with its guardrails: Max Amount and (as a tool) the Order ID refused before any
 * request; Dry Run looks the Order ID up and reads the balance, and sends no create; Daily Limit
 * is checked after the Order ID look-up (an existing payout is not paid again, so not counted
 * twice) and just before the create request. The creating itself is createPayoutOnce (and, as a
 * tool, the summary the agent reads: createOnce.ts).
 */
export async function createGuardedPayout(
	this: IExecuteFunctions,
	itemIndex: number,
	endpoint: Endpoint,
	body: Record<string, string>,
	intent: PayoutIntent,
): Promise<IDataObject[]> {
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const currency = (body.currency ?? PAYOUT_CURRENCY).toUpperCase();
	const guard = readGuardrails.call(this, itemIndex, options, intent.cents, intent.label, currency);
	const orderId = checkOrderId.call(this, itemIndex);
	const request = { orderId, cents: intent.cents, label: intent.label, currency };
	return await createPayoutOnce.call(
		this,
		itemIndex,
		endpoint,
		body,
		intent,
		async () => {
			await checkDailyLimit.call(this, guard, intent.cents, intent.label, itemIndex, currency);
		},
		guard.dryRun
			? async (existing) => await dryRunOutput.call(this, itemIndex, guard, request, existing)
			: undefined,
	);
}
