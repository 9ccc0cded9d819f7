/*
 * Money that moves (a payout, a refund) is created at most once per Order ID. This file holds the
 * one way of doing it; each kind gives a small adapter (MoneyMove): how to find what already
 * exists, how to create, what "the same intent" is after a lost answer, how to describe it.
 *
 * 1. Find what already exists of this intent. Something under the Order ID that is another
 *    intent is the adapter's error. Something the service shows without the Order ID (a refund of
 *    the same payment and amount) cannot be told from this one: an error naming it, unless On
 *    Existing says to treat it as this one.
 * 2. Dry Run outputs what would happen and stops; an existing record is output (already_existed:
 *    true), or an error with On Existing = Fail; the adapter's last checks run (Daily Limit, what
 *    a payment can still give back).
 * 3. Create. "Order ID taken", no answer or a 5xx (the money may have moved before the service
 *    failed to answer): the adapter reads again and recognises the record of this intent; with
 *    none found the error stands and says a re-run is safe. An answer without the record's id is
 *    an error telling to look it up.
 * 4. The adapter's check after creating (refunds: another refund of the same intent made at the
 *    same moment), then the output rows, with a summary an AI agent reads when run as a tool.
 */

import type { IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { formatCents, toCents } from '../../shared';
import { errorKeyOf, httpCodeOf } from '../transport';
import { recordOf } from './normalize';

/** The words of one kind of money that moves. */
export interface MoneyKind {
	/** `payout`, `refund`. */
	noun: string;
	/** The option's name in messages: `On Existing Payout`. */
	onExistingOption: string;
	/** `paid`, `refunded`. */
	moved: string;
	/** `paid out`, `refunded`: "Order ID … was already paid out". */
	movedAway: string;
	/** The summary's first words: `Paid out`, `Refunded`. */
	done: string;
	/** `pays`, `refunds`: "it never pays an Order ID twice". */
	moves: string;
	/** `paying`, `refunding`. */
	moving: string;
	/** What the request an AI agent answers gives as its Order ID. */
	toolOrderId: string;
}

export const PAYOUT_KIND: MoneyKind = {
	noun: 'payout',
	onExistingOption: 'On Existing Payout',
	moved: 'paid',
	movedAway: 'paid out',
	done: 'Paid out',
	moves: 'pays',
	moving: 'paying',
	toolOrderId:
		'the Order ID of the request it pays (an invoice or withdrawal number the user gave)',
};

export const REFUND_KIND: MoneyKind = {
	noun: 'refund',
	onExistingOption: 'On Existing Refund',
	moved: 'refunded',
	movedAway: 'refunded',
	done: 'Refunded',
	moves: 'refunds',
	moving: 'refunding',
	toolOrderId: 'the Order ID of the request it answers (a return or ticket number the user gave)',
};

/** The service refused the Order ID as already used (a validation error on `order_id`). */
export function orderIdTaken(error: unknown): boolean {
	const fields = (error as { context?: IDataObject } | undefined)?.context?.fieldErrors as
		| IDataObject
		| undefined;
	return errorKeyOf(error) === 'invalid_request_data' && fields?.order_id !== undefined;
}

/** No answer, or a 5xx: the service may have moved the money before it failed to answer. */
export function mayHaveMovedMoney(error: unknown): boolean {
	const code = httpCodeOf(error);
	return code === undefined || code >= 500;
}

/** The service's records as output rows, each with the Order ID and whether it existed before. */
export function withOrderId(
	records: IDataObject[],
	orderId: string,
	alreadyExisted: boolean,
): IDataObject[] {
	return records.map((record) => {
		const out = recordOf(record);
		return { ...out, order_id: out.order_id ?? orderId, already_existed: alreadyExisted };
	});
}

/** Whether the node runs as an AI agent's tool: n8n gives a tool its own type, named …Tool. */
export function runsAsTool(this: IExecuteFunctions): boolean {
	const type = this.getNode().type ?? '';
	return (type.split('.').pop() ?? '').endsWith('Tool');
}

/**
 * As an AI agent's tool, money moves only under an Order ID the request gave: refused before any
 * request otherwise. `what` names the money: "250.00 RUB to card 411111******1111".
 */
export function requireToolOrderId(
	this: IExecuteFunctions,
	itemIndex: number,
	kind: MoneyKind,
	what: string,
): void {
	if (!runsAsTool.call(this)) return;
	const raw = this.getNodeParameter('orderId', itemIndex, '') as unknown;
	const orderId = typeof raw === 'string' || typeof raw === 'number' ? String(raw).trim() : '';
	if (orderId !== '') return;
	throw new NodeOperationError(
		this.getNode(),
		`Refused: no ${kind.noun} of ${what} without an explicit Order ID`,
		{
			itemIndex,
			description: `Nothing was ${kind.moved}. A ${kind.noun} requested by an AI agent needs ${kind.toolOrderId}; ask for it, never invent one.`,
		},
	);
}

/** What an AI agent reads: the amount, where it went and the Order ID, in words. */
export function moneySummary(
	kind: MoneyKind,
	records: IDataObject[],
	orderId: string,
	currency: string,
	where: string,
): string {
	const cents = records.reduce((sum, record) => sum + (toCents(record.amount) ?? 0), 0);
	const ids = records.map((record) => `${String(record.id)} (${String(record.status ?? '?')})`);
	const what = `${formatCents(cents)} ${currency} ${where} under Order ID ${orderId}`;
	return records.some((record) => record.already_existed === true)
		? `Already ${kind.moved} earlier, nothing ${kind.moved} now: ${what}, ${kind.noun} ${ids.join(', ')}`
		: `${kind.done} ${what}: ${kind.noun} ${ids.join(', ')}`;
}

/** What to do with a record of this intent that already exists (the On Existing option). */
export type OnExisting = 'return' | 'treatAsDone' | 'fail';

export function onExistingOf(value: unknown): OnExisting {
	return value === 'fail' ? 'fail' : value === 'treatAsDone' ? 'treatAsDone' : 'return';
}

/** Records of this intent that exist already. */
export interface Found {
	records: IDataObject[];
	/**
	 * true: the service shows them under this Order ID (or refused the Order ID as taken). false:
	 * it shows them without an Order ID and they look like this intent (same payment, same amount):
	 * the node cannot tell them from it.
	 */
	identified: boolean;
}

/** One kind's part of creating once. */
export interface MoneyMove {
	kind: MoneyKind;
	orderId: string;
	onExisting: OnExisting;
	/** The records of this intent that exist already, or undefined. Throws for another intent. */
	find(): Promise<Found | undefined>;
	/** The records named in an error: "40.00 to …: payout P1 (MODERATING)". */
	describe(records: IDataObject[]): string;
	/** This request in words, for the error on records it cannot tell from it: "250.50 of payment P under Order ID R". */
	request: string;
	/** How to go on past records it cannot tell from this intent. */
	cannotTellAdvice?: string;
	/** Dry Run: what would happen (given what exists), with its own checks. */
	dryRun?(found: Found | undefined): Promise<IDataObject>;
	/** The last checks before anything is sent (they may refuse; nothing is sent then). */
	beforeCreate?(): Promise<void>;
	/** The create request; its answer. */
	create(): Promise<IDataObject>;
	/** The records the create answer names; undefined when it names none (no id). */
	recordsOf(answer: IDataObject): IDataObject[] | undefined;
	/** The error on an answer without the records: what is missing, how to look them up. */
	noRecords: { missing: string; lookUp: string };
	/**
	 * After "taken" or a lost answer: reads again and returns the records of this intent it
	 * recognises (checked to be this intent), or undefined (none found, or the read failed).
	 */
	recover(taken: boolean): Promise<IDataObject[] | undefined>;
	/** A sentence added to the "running again is safe" note. */
	rerunNote?: string;
	/** A check after creating (it may throw, naming what it found). */
	afterCreate?(records: IDataObject[]): Promise<void>;
	/** For the AI agent's summary: the currency and where the money went ("to card …"). */
	summary(): { currency: string; where: string };
}

/** Creations running in this process, one at a time per key (credential and payment). */
const running = new Map<string, Promise<void>>();

/**
 * Runs `work` after every earlier work of the same key in this n8n process has finished. Two
 * processes (queue-mode workers) do not see each other: the caller checks after creating.
 */
export async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
	const before = running.get(key) ?? Promise.resolve();
	let release: () => void = () => {};
	const mine = new Promise<void>((resolve) => (release = resolve));
	const tail = before.then(async () => await mine);
	running.set(key, tail);
	try {
		await before;
		return await work();
	} finally {
		release();
		if (running.get(key) === tail) running.delete(key);
	}
}

function cannotTell(this: IExecuteFunctions, itemIndex: number, move: MoneyMove, found: Found) {
	const { kind } = move;
	return new NodeOperationError(
		this.getNode(),
		`Refused: ${move.describe(found.records)} cannot be told from this ${kind.noun} (${move.request}): the service shows no Order ID on ${found.records.length === 1 ? 'it' : 'them'}`,
		{
			itemIndex,
			description: [
				`Nothing was ${kind.moved}.`,
				move.cannotTellAdvice ??
					`If it is this ${kind.noun}, set Options › ${kind.onExistingOption} to Treat as Done.`,
			].join(' '),
		},
	);
}

function existingOutput(
	this: IExecuteFunctions,
	itemIndex: number,
	move: MoneyMove,
	found: Found,
): IDataObject[] {
	const { kind, orderId } = move;
	if (!found.identified && move.onExisting !== 'treatAsDone') {
		throw cannotTell.call(this, itemIndex, move, found);
	}
	if (move.onExisting === 'fail') {
		throw new NodeOperationError(
			this.getNode(),
			`Order ID ${orderId} was already ${kind.movedAway}: ${move.describe(found.records)}`,
			{
				itemIndex,
				description: `Nothing was ${kind.moved} again (${kind.onExistingOption} is set to Fail). Give a new ${kind.noun} its own Order ID.`,
			},
		);
	}
	return withOrderId(found.records, orderId, true);
}

async function createAndCheck(
	this: IExecuteFunctions,
	itemIndex: number,
	move: MoneyMove,
): Promise<IDataObject[]> {
	const { kind, orderId } = move;
	const found = await move.find();
	if (found && !found.identified && move.onExisting !== 'treatAsDone') {
		throw cannotTell.call(this, itemIndex, move, found);
	}
	if (move.dryRun) return [await move.dryRun(found)];
	if (found) return existingOutput.call(this, itemIndex, move, found);
	await move.beforeCreate?.();

	let answer: IDataObject;
	try {
		answer = await move.create();
	} catch (error) {
		const taken = orderIdTaken(error);
		if (taken || mayHaveMovedMoney(error)) {
			const after = await move.recover(taken);
			// Taken meanwhile: another run's record. No answer: this request's own record.
			if (after && taken) {
				return existingOutput.call(this, itemIndex, move, { records: after, identified: true });
			}
			if (after) return withOrderId(after, orderId, false);
		}
		if (error instanceof NodeApiError && mayHaveMovedMoney(error)) {
			error.description = [
				error.description,
				`The ${kind.noun} may have been made before the service failed to answer: running this node again with Order ID ${orderId} is safe, it never ${kind.moves} an Order ID twice.`,
				move.rerunNote,
			]
				.filter(Boolean)
				.join(' ');
		}
		throw error instanceof NodeApiError
			? error
			: new NodeApiError(this.getNode(), error as JsonObject, { itemIndex });
	}
	const records = move.recordsOf(answer);
	if (records === undefined) {
		throw new NodeOperationError(
			this.getNode(),
			`The service accepted ${kind.noun} ${orderId} but answered without ${move.noRecords.missing}`,
			{
				itemIndex,
				description: `The money may have moved. ${move.noRecords.lookUp} before ${kind.moving} again; running this node again with the same Order ID is safe.`,
			},
		);
	}
	await move.afterCreate?.(records);
	return withOrderId(records, orderId, false);
}

/**
 * Creates at most once per Order ID (see the top of this file); with `lockKey`, one at a time per
 * key in this process. As an AI agent's tool, each row carries the summary the agent reads.
 */
export async function createOnce(
	this: IExecuteFunctions,
	itemIndex: number,
	move: MoneyMove,
	lockKey?: string,
): Promise<IDataObject[]> {
	const rows =
		lockKey === undefined
			? await createAndCheck.call(this, itemIndex, move)
			: await oneAtATime(lockKey, async () => await createAndCheck.call(this, itemIndex, move));
	if (move.dryRun || !runsAsTool.call(this)) return rows;
	const { currency, where } = move.summary();
	const summary = moneySummary(move.kind, rows, move.orderId, currency, where);
	return rows.map((row) => ({ ...row, summary }));
}
