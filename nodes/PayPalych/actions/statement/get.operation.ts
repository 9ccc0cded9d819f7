import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import {
	ENDPOINTS,
	SERVICE_TIME_ZONE,
	addDays,
	addMovement,
	dateIn,
	finishStatement,
	isKnownTimeZone,
	newStatementTotals,
	statementDay,
	toYmd,
	type StatementMovement,
} from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { inputError } from '../../helpers/validation';
import { apiRequest } from '../../transport';
import { readDay } from './read';

const displayOptions = { show: { resource: ['statement'], operation: ['get'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Day',
		name: 'day',
		type: 'dateTime',
		default: '',
		description: 'The day to report on; leave it empty for yesterday in the chosen time zone',
	},
	{
		displayName: 'Time Zone',
		name: 'timeZone',
		type: 'string',
		default: SERVICE_TIME_ZONE,
		placeholder: 'e.g. Europe/Moscow',
		description:
			"The time zone your day starts and ends in, Moscow time (the service's own) by default",
	},
	{
		displayName: 'Output',
		name: 'output',
		type: 'options',
		default: 'summary',
		options: [
			{
				name: 'Summary',
				value: 'summary',
				description:
					'One item per currency: payments, refunds, chargebacks, payouts, pending payouts and net',
			},
			{
				name: 'Movements',
				value: 'movements',
				description:
					'One item per payment, refund, chargeback and payout of the day, with its effect on the balance',
			},
		],
		description: 'What the operation outputs',
	},
	{
		displayName: 'Include Balance',
		name: 'includeBalance',
		type: 'boolean',
		default: false,
		displayOptions: { show: { output: ['summary'] } },
		description:
			'Whether to add the balance now (merchant/balance: available, locked, hold) to each currency of the summary',
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

function dayOf(this: IExecuteFunctions, itemIndex: number, timeZone: string): string {
	const value = this.getNodeParameter('day', itemIndex, '');
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))
		return addDays(dateIn(timeZone), -1);
	const checked = toYmd(value);
	if (!checked.ok) throw inputError(this.getNode(), 'Day', checked.message, itemIndex);
	return checked.value;
}

function timeZoneOf(this: IExecuteFunctions, itemIndex: number): string {
	const value = this.getNodeParameter('timeZone', itemIndex, SERVICE_TIME_ZONE);
	const zone = typeof value === 'string' ? value.trim() : '';
	if (zone === '') return SERVICE_TIME_ZONE;
	if (!isKnownTimeZone(zone))
		throw inputError(
			this.getNode(),
			'Time Zone',
			`is not a time zone this n8n knows (got ${JSON.stringify(value)})`,
			itemIndex,
			'Use an IANA time zone name such as Europe/Moscow, Asia/Yekaterinburg or UTC.',
		);
	return zone;
}

/**
 * Statement › Get: the day's payments, refunds, chargebacks and payouts, read from the service's
 * lists (every page), as one summary per currency or one item per movement. It only reads: nothing
 * is created, paid or refunded. In summary mode only the totals are kept while the pages are read.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const timeZone = timeZoneOf.call(this, itemIndex);
	const day = statementDay(dayOf.call(this, itemIndex, timeZone), timeZone);
	const output = this.getNodeParameter('output', itemIndex, 'summary') as string;
	if (output === 'movements') {
		const movements: StatementMovement[] = [];
		await readDay(this, day, itemIndex, (movement) => movements.push(movement));
		return movements as unknown as IDataObject[];
	}
	const totals = newStatementTotals(day.day, timeZone);
	await readDay(this, day, itemIndex, (movement) => addMovement(totals, movement));
	const withBalance = this.getNodeParameter('includeBalance', itemIndex, false) as boolean;
	const balance = withBalance
		? normalizeResponse(await apiRequest.call(this, ENDPOINTS.merchantBalance, { itemIndex }))
		: undefined;
	return finishStatement(totals, balance) as unknown as IDataObject[];
}
