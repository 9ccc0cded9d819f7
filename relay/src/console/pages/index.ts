import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RelayContext } from '../../context.ts';
import { LOGIN } from '../layout.ts';
import { consoleErrorHandler, sendRefusal } from '../refusal.ts';
import type { ConsoleAuth, ConsoleSession } from '../session.ts';
import type { PageDeps } from './common.ts';
import { catchupRoutes } from './catchup.ts';
import { deadRoutes } from './dead.ts';
import { eventRoutes } from './events.ts';
import { overviewRoutes } from './overview.ts';
import { replayRoutes } from './replay.ts';
import { statementRoutes } from './statement.ts';

export interface PagesOptions {
	ctx: RelayContext;
	auth: ConsoleAuth;
	cookie: string;
}

/**
 * The pages and actions behind the login (each page's routes live beside its page): the session
 * is checked on every request, every POST needs a form body and the session's CSRF token, and an
 * error becomes a page with the operator's navigation.
 */
export async function consolePages(
	app: FastifyInstance,
	{ ctx, auth, cookie }: PagesOptions,
): Promise<void> {
	const sessions = new WeakMap<FastifyRequest, ConsoleSession>();
	const csrfOf = (request: FastifyRequest) =>
		auth.csrfToken(sessions.get(request) as ConsoleSession);
	const csrfIfAny = (request: FastifyRequest) =>
		sessions.has(request) ? csrfOf(request) : undefined;

	app.addHook('onRequest', async (request, reply) => {
		const session = await auth.check(request.cookies[cookie]);
		if (!session) {
			if (request.method === 'GET' || request.method === 'HEAD') {
				return reply.redirect(
					`${LOGIN}?${new URLSearchParams({ next: request.url }).toString()}`,
					303,
				);
			}
			return sendRefusal(reply, 401, 'Not logged in', [
				'Log in first (the login may have expired).',
			]);
		}
		sessions.set(request, session);
		return undefined;
	});

	app.addHook('preHandler', async (request, reply) => {
		if (request.method !== 'POST') return undefined;
		const type = String(request.headers['content-type'] ?? '');
		if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
			return sendRefusal(
				reply,
				415,
				'Refused',
				['Console actions are HTML form posts (application/x-www-form-urlencoded).'],
				csrfOf(request),
			);
		}
		const body = (request.body ?? {}) as Record<string, unknown>;
		if (!auth.checkCsrf(sessions.get(request) as ConsoleSession, body._csrf)) {
			request.log.warn({ reason: 'csrf' }, 'console action refused');
			return sendRefusal(
				reply,
				403,
				'Refused',
				[
					'The form is missing its CSRF token, or it is not this login’s: reload the page and try again.',
				],
				csrfOf(request),
			);
		}
		return undefined;
	});

	app.setNotFoundHandler((request, reply) =>
		sendRefusal(reply, 404, 'Not found', ['There is no such console page.'], csrfIfAny(request)),
	);
	app.setErrorHandler((error, request, reply) =>
		consoleErrorHandler(error, request, reply, csrfIfAny(request)),
	);

	const deps: PageDeps = { ctx, csrfOf };
	overviewRoutes(app, deps);
	eventRoutes(app, deps);
	deadRoutes(app, deps);
	replayRoutes(app, deps);
	catchupRoutes(app, deps);
	statementRoutes(app, deps);
}
