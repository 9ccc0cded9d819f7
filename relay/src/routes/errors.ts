import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { RelayError, StoreInputError } from '../errors.ts';

/**
 * The one place an error becomes a client's answer: JSON for the admin API, health, metrics and
 * the postback routes (`jsonErrorHandler`, set once on the app; the postback routes read
 * `clientFault` for their own answers), an HTML page for the console (its handler reads
 * `clientFault` too). A typed error (errors.ts) or a schema's refusal is the client's fault, with
 * its status and reason; anything else is the relay's own failure: logged, answered with a bare
 * 500 (or the postback's 503), never with its text.
 */

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
