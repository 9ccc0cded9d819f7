// What the intake (intake.ts) admits and answers, and what its look-ups read and return: the types
// the look-ups (fidelity.ts) and the routes share with it, apart so that none imports the intake.
import type { PostbackEvent, PostbackFields } from './contract.ts';

/**
 * Where a verified event comes from. A postback (or redirect) carries the body exactly as received
 * and the index of the token that verified it; a catch-up event is rebuilt from the service's own
 * records (`orderUnknown`: the service did not tell the bill's order ID, so InvId is '').
 */
export type Source =
	| {
			via: 'postback';
			body: string;
			contentType: string;
			tokenIndex: number;
			/** The sender's network (limits.ts networkOf): whose look-up allowance it spends. */
			network?: string;
	  }
	| { via: 'catch-up'; orderUnknown: boolean };

/** An event asking to be admitted: what a look-up reads. */
export interface Candidate {
	kind: PostbackEvent;
	fields: PostbackFields;
	source: Source;
	/**
	 * A postback the store would not take because it holds a twin (NewEvent.twinCheck): an event of
	 * the same kind and TrsId under another dedupe key. Only then does fidelity.ts read the store.
	 */
	twins?: boolean;
}

/** Refused, nothing stored: the HTTP status the sender is answered with and why. */
export interface Refusal {
	outcome: 'refused';
	status: 403 | 429;
	reason: string;
	detail: string;
	/** Seconds until the sender may try again (429). */
	retryAfter?: number;
}

export type Admission =
	| { outcome: 'stored'; eventId: string; duplicate: boolean; deliveries: number }
	/** The store holds this event already under another InvId (catch-up only): nothing stored. */
	| { outcome: 'known' }
	/**
	 * A look-up could not be made (the service or the network failed, or the look-ups of this
	 * minute are spent: `retryAfter` seconds): the sender retries later (503).
	 */
	| { outcome: 'unavailable'; reason: string; retryAfter?: number }
	| Refusal;

/**
 * A look-up run before the insert, in order: undefined lets the event go on, anything else is the
 * answer and nothing is stored. A look-up decides itself which kinds and sources it applies to.
 * Later checks (fidelity, hardening) are added to `Intake`'s list, nowhere else.
 */
export type LookUp = (
	candidate: Candidate,
) => Promise<Exclude<Admission, { outcome: 'stored' }> | StoredBy | undefined>;

/** A look-up's answer that the event is one the store holds (see fidelity.ts). */
export type DuplicateOf = { outcome: 'stored'; eventId: string; duplicate: true; deliveries: 0 };

/**
 * A look-up's answer that the event is stored: a duplicate of one the store holds (DuplicateOf),
 * or stored by the look-up itself (a payment of the bill its TrsId names, see Intake), with the
 * deliveries it handed to the forwarder (`claimed`).
 */
export type StoredBy =
	| DuplicateOf
	| {
			outcome: 'stored';
			eventId: string;
			duplicate: boolean;
			deliveries: number;
			claimed?: readonly unknown[];
	  };
