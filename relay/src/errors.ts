/**
 * The relay's typed errors: plain classes at the bottom of the relay, imported by the store, the
 * services and the surfaces alike. A typed error carries the status a client gets and a reason
 * that is safe to show; anything else is the relay's own failure. How a surface turns an error
 * into an answer (JSON for the admin API and the postback routes, a page for the console) lives
 * beside the routes (routes/errors.ts).
 */
export class RelayError extends Error {
	/** The HTTP status a client gets. */
	readonly statusCode: 400 | 404 | 409;
	/** A short title (the console's page heading). */
	readonly title: string;

	/** `message`: one sentence for the client or the operator. */
	constructor(statusCode: 400 | 404 | 409, title: string, message: string) {
		super(message);
		this.name = new.target.name;
		this.statusCode = statusCode;
		this.title = title;
	}
}

/**
 * A value the store refuses before any SQL (a NUL byte, a number beyond 2^53, a text too long):
 * the client's mistake, 400 with the reason; nothing is changed.
 */
export class StoreInputError extends RelayError {
	constructor(message: string) {
		super(400, 'Bad request', message);
	}
}

/** An operation refused: bad input (400), no such thing (404), nothing it would change (409). */
export class OperationRefused extends RelayError {}
