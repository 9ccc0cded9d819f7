import type { Logger } from 'pino';
import type { MoneyBackEvent, PostbackFields } from '../contract.ts';
import type { Intake } from '../intake.ts';
import { StoreInputError } from '../store/input.ts';
import { placeOf } from './baseline.ts';
import type { Window } from './result.ts';

export type AdmitArgs = [
	kind: 'payment' | 'payout' | MoneyBackEvent,
	fields: PostbackFields,
	w: Window,
	orderUnknown: boolean,
	record: Record<string, unknown>,
];

/**
 * Admits the rebuilt postback of `record` as a catch-up event unless the store has it, or counts
 * it when the service recorded it before the baseline (baseline.ts). `orderUnknown`: the
 * service did not tell the bill's order ID, so InvId is '' (see Intake's look-ups).
 */
export async function admitRecord(
	intake: Pick<Intake, 'admit'>,
	logger: Logger,
	...[kind, fields, { result, baseline }, orderUnknown, record]: AdmitArgs
): Promise<Awaited<ReturnType<Intake['admit']>> | undefined> {
	const place = placeOf(baseline, record);
	if (place === 'before') {
		result.beforeBaseline += 1;
		return undefined;
	}
	// A refund's or chargeback's id is its Id (the reports' `trsId`).
	const trsId = fields.TrsId ?? fields.Id ?? '';
	let admitted;
	try {
		admitted = await intake.admit(kind, fields, { via: 'catch-up', orderUnknown });
	} catch (error) {
		// A record the store cannot hold (a NUL, an over-long order ID) must not stop the run at
		// the same place every time: it is skipped, reported and alerted; the run goes on.
		if (!(error instanceof StoreInputError)) throw error;
		result.skippedRecords.push({ kind, trsId: trsId.slice(0, 100), reason: error.message });
		logger.warn(
			{ kind, trsId: trsId.slice(0, 100), error: error.message },
			'catch-up skipped a record the store cannot hold',
		);
		return undefined;
	}
	if (admitted.outcome !== 'stored' || admitted.duplicate) return admitted;
	result.found.push({
		eventId: admitted.eventId,
		kind,
		trsId,
		status: fields.Status,
		...(place === 'backfill' ? { backfill: true as const } : {}),
	});
	return admitted;
}
