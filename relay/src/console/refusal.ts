import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientFault } from '../routes/errors.ts';
import { html } from './html.ts';
import { CONSOLE, page, sendPage } from './layout.ts';

const back = html`<p><a href="${CONSOLE}">Back to the overview</a></p>`;

/**
 * A refusal as a console page: what was wrong, and that nothing changed. `csrf` (a logged-in
 * operator's) puts the navigation and the logout form in the header.
 */
export function sendRefusal(
	reply: FastifyReply,
	status: number,
	title: string,
	errors: readonly string[],
	csrf?: string,
) {
	return sendPage(
		reply,
		status,
		page(
			{ title, csrf, errors: [...errors, 'Nothing was changed.'] },
			html`<h1>${title}</h1>${back}`,
		),
	);
}

/**
 * Errors on a console page, as an HTML page (the console's one mapping of routes/errors.ts): a client's
 * fault (a refused operation, a value the store refuses, Fastify's own 4xx) with its title and
 * reason, anything else a bare 500 (logged; no stack, no SQL text).
 */
export function consoleErrorHandler(
	error: unknown,
	request: FastifyRequest,
	reply: FastifyReply,
	csrf?: string,
) {
	const fault = clientFault(error);
	if (!fault) {
		request.log.error({ err: error }, 'console page failed');
		const title = 'Something went wrong';
		const errors = [
			'The relay could not answer this page; the error is in its log. Try again shortly.',
		];
		return sendPage(reply, 500, page({ title, csrf, errors }, html`<h1>${title}</h1>${back}`));
	}
	if (fault.input) request.log.warn({ reason: fault.message }, 'refused input');
	const lines = fault.issues
		? fault.issues.map((i) =>
				i.path ? `${i.path}: ${i.message ?? 'is not valid'}` : (i.message ?? 'Not valid'),
			)
		: [`${fault.message}.`.replace(/\.\.$/, '.')];
	return sendRefusal(reply, fault.status, fault.title, lines, csrf);
}
