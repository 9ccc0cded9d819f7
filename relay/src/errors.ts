import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ReplayPlan } from './reads.ts';

/**
 * The relay's typed errors and the one place each surface turns an error into an answer: JSON for
 * the admin API and the postback routes (`jsonErrorHandler`, `clientFault`), an HTML page for the
 * console (its handler reads `clientFault` too). A typed error carries the status a client gets
 * and a reason that is safe to show; anything else is the relay's own failure: logged, answered
 * with a bare 500 (or the postback's 503), never with its text.
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

/** What a client is told about an error it caused. */
export interface ClientFault {
	status: number;
	title: string;
	message: string;
	/** A schema's refusal: one line per issue (`path`: the field, empty for the whole input). */
	issues?: Array<{ path: string; message?: string }>;
	/** The store refused a value: logged as refused input. */
	input: boolean;
}

/**
 * The client's part of an error: a typed error, a schema's refusal, or Fastify's own 4xx (a body
 * too large, bad JSON); undefined for anything else (the relay's own failure).
 */
export function clientFault(error: unknown): ClientFault | undefined {
	if (error instanceof RelayError)
		return {
			status: error.statusCode,
			title: error.title,
			message: error.message,
			input: error instanceof StoreInputError,
		};
	if (hasZodFastifySchemaValidationErrors(error))
		return {
			status: 400,
			title: 'Bad request',
			message: error.message,
			issues: error.validation.map((i) => ({
				path: i.instancePath.split('/').filter(Boolean).join('.'),
				message: i.message,
			})),
			input: false,
		};
	const status = (error as Partial<FastifyError> | undefined)?.statusCode ?? 500;
	if (status >= 400 && status < 500)
		return { status, title: 'Refused', message: (error as Error).message, input: false };
	return undefined;
}

/**
 * Errors as JSON (the admin API and the postback routes): a client's fault with its status and
 * reason (a schema's refusal with its `issues`), anything else a bare 500, logged with its cause.
 */
export function jsonErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply) {
	const fault = clientFault(error);
	if (!fault) {
		request.log.error({ err: error }, 'request failed');
		return reply.code(500).send({ error: 'Internal Server Error' });
	}
	if (fault.input) request.log.warn({ reason: fault.message }, 'refused input');
	const name = STATUS_CODES[fault.status];
	const detail = fault.issues ? { issues: fault.issues } : { message: fault.message };
	return reply.code(fault.status).send({ error: name, ...detail });
}

/**
 * A confirmed range replay whose plan changed since the confirmation (events arrived, targets
 * changed): 409, nothing replayed; `plan` is the new one to confirm.
 */
export class ReplayChanged extends OperationRefused {
	/** The plan as it is now, to confirm again. */
	readonly plan: ReplayPlan;

	constructor(plan: ReplayPlan, message: string) {
		super(409, 'Confirm again', message);
		this.plan = plan;
	}
}
