/*
 * The limits of the operations that send money, as fields a merchant sees without opening
 * "Add Option": a notice that the operation sends money, then Max Amount, Daily Limit and its Time
 * Zone (payouts) or Max Amount (refunds). Before these were fields of their own they were options;
 * a workflow saved then keeps them in its Options (n8n drops a collection's values that have no
 * option, so they stay there as hidden options) and they still apply: where a limit is set in both
 * places the lower one holds.
 */

import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { SERVICE_TIME_ZONE } from '../../shared';

/** The notice and limit fields of the two payout-create operations (each adds its display options). */
export const payoutLimitFields: INodeProperties[] = [
	{
		displayName:
			'This sends money from your balance: set Max Amount and Daily Limit, and try it first with Dry Run under Options',
		name: 'sendsMoneyNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Max Amount',
		name: 'maxAmount',
		type: 'string',
		default: '',
		placeholder: 'e.g. 10000.00',
		description: 'Refuse any payout above this amount; empty means no limit',
	},
	{
		displayName: 'Daily Limit',
		name: 'dailyLimit',
		type: 'string',
		default: '',
		placeholder: 'e.g. 50000.00',
		description:
			"Refuse a payout that would bring today's payouts above this amount; empty means no limit",
	},
	{
		displayName: 'Time Zone',
		name: 'timeZone',
		type: 'string',
		default: SERVICE_TIME_ZONE,
		placeholder: 'e.g. Europe/Moscow',
		description: "The time zone whose midnight starts Daily Limit's day",
	},
];

/** The notice and the limit field of Refund › Create. */
export const refundLimitFields: INodeProperties[] = [
	{
		displayName:
			'This sends money back to the payer: set Max Amount, and try it first with Dry Run under Options',
		name: 'sendsMoneyNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Max Amount',
		name: 'maxAmount',
		type: 'string',
		default: '',
		placeholder: 'e.g. 5000.00',
		description:
			"Refuse any refund above this amount in the payment's currency; empty means no limit",
	},
];

function hidden(name: string, displayName: string, value: string): INodeProperties {
	return { displayName, name, type: 'hidden', default: value };
}

/** Where the payout limits lived in Options: kept for the workflows saved then, never offered. */
export const legacyPayoutLimitOptions: INodeProperties[] = [
	hidden('dailyLimit', 'Daily Limit', ''),
	hidden('maxAmount', 'Max Amount', ''),
	hidden('timeZone', 'Time Zone', ''),
];

/** Where the refund limit lived in Options: kept for the workflows saved then, never offered. */
export const legacyRefundLimitOptions: INodeProperties[] = [hidden('maxAmount', 'Max Amount', '')];

const isBlank = (value: unknown) =>
	value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/** One limit as set: its amount text (unchecked) and the time zone it counts its day in. */
export interface SetLimit {
	value: unknown;
	timeZone?: unknown;
}

/** The limits a create operation runs with: every place a limit is set in, the field's first. */
export interface LimitInputs {
	maxAmount: SetLimit[];
	dailyLimit: SetLimit[];
	/** The Time Zone field's value (empty: the default), for messages and a Daily Limit of none. */
	timeZone: unknown;
}

/** Reads the limit fields and the limits a saved workflow keeps in its Options. */
export function limitInputs(
	this: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
): LimitInputs {
	const field = (name: string, fallback: unknown) =>
		this.getNodeParameter(name, itemIndex, fallback) as unknown;
	const timeZone = field('timeZone', '');
	const inputs: LimitInputs = { maxAmount: [], dailyLimit: [], timeZone };
	const ownMax = field('maxAmount', '');
	if (!isBlank(ownMax)) inputs.maxAmount.push({ value: ownMax });
	if (!isBlank(options.maxAmount)) inputs.maxAmount.push({ value: options.maxAmount });
	const ownDaily = field('dailyLimit', '');
	if (!isBlank(ownDaily)) inputs.dailyLimit.push({ value: ownDaily, timeZone });
	if (!isBlank(options.dailyLimit))
		inputs.dailyLimit.push({ value: options.dailyLimit, timeZone: options.timeZone });
	return inputs;
}
