import type { StatementMovement } from '../contract.ts';
import type { DeliveryCheck } from './deliveries.ts';
import type { BalancePoint, CurrencyLedger } from './ledger.ts';
import type { UnreadList } from './reader.ts';

/** A day's statement, as statements.ts reads it and the report, the CSV and the console show it. */
export interface Statement {
	day: string;
	timeZone: string;
	/** The day is over (its closing balance is a recorded snapshot, not the balance now). */
	closed: boolean;
	opening: BalancePoint | null;
	closing: BalancePoint | null;
	currencies: CurrencyLedger[];
	/** null with `notDeliveredReason` when the store no longer holds the day's events. */
	notDelivered: DeliveryCheck['items'] | null;
	notDeliveredReason?: string;
	notWatched: DeliveryCheck['notWatched'];
	beforeRelay: number;
	unread: UnreadList[];
	calls: number;
	/** The day's movements (the CSV's rows; not in the JSON answer). */
	movements: StatementMovement[];
}
