import type { FastifyRequest } from 'fastify';

/**
 * What a route wants said about a request: merged into the single "request completed" line, so a
 * postback costs one log line. Never holds a body, a field value list, a token or a signature.
 */
export interface RequestNote {
	msg: string;
	level?: 'debug' | 'info' | 'warn' | 'error';
	[key: string]: unknown;
}

const notes = new WeakMap<FastifyRequest, RequestNote>();

export function noteRequest(request: FastifyRequest, note: RequestNote): void {
	notes.set(request, note);
}

export function takeNote(request: FastifyRequest): RequestNote | undefined {
	const note = notes.get(request);
	notes.delete(request);
	return note;
}
