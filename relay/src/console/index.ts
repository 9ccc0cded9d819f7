import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { ContextOptions } from '../context.ts';
import { CONSOLE } from './layout.ts';
import { consolePages } from './pages/index.ts';
import { SESSION_COOKIE, loginRoutes } from './pages/login.ts';
import { consoleErrorHandler } from './refusal.ts';
import { ConsoleAuth } from './session.ts';
import type { SessionRevocations } from './session.ts';
import { CONSOLE_CSS } from './style.ts';

export { LOGIN_COOKIE, SESSION_COOKIE } from './pages/login.ts';
export type { SessionRevocations } from './session.ts';

/**
 * Every console answer: no script may run (the pages have none, so an escaped-wrong field could
 * not execute either), nothing is loaded from elsewhere, no framing, nothing cached.
 */
const SECURITY_HEADERS = {
	'content-security-policy':
		"default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	'x-content-type-options': 'nosniff',
	'x-frame-options': 'DENY',
	'referrer-policy': 'no-referrer',
	'cache-control': 'no-store',
};

export interface ConsoleOptions extends ContextOptions {
	/** Where logouts are kept for every instance and restart (app.ts: the store's, nothing else of it). */
	sessions: SessionRevocations;
	/** Clock of the login sessions (tests). */
	now?: () => number;
}

/**
 * The operators' web console, registered under /admin next to the admin API: a login form that
 * trades the admin token for a signed session cookie, then server-rendered pages (overview,
 * events, dead letters) over the same store the admin API reads. Pages are plain HTML forms with
 * a CSRF token in every POST; no script runs in them.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
	const { ctx } = options;
	const auth = new ConsoleAuth(ctx.config.adminToken, options.now, options.sessions);
	await app.register(fastifyCookie);
	await app.register(fastifyFormbody, { bodyLimit: 16_384 });

	app.addHook('onRequest', async (_request, reply) => {
		reply.headers(SECURITY_HEADERS);
	});
	app.setErrorHandler((error, request, reply) => consoleErrorHandler(error, request, reply));

	// An operator who types /admin expects the console (its login page when signed out).
	app.get('/', async (_request, reply) => reply.redirect(CONSOLE, 303));

	app.get('/console/assets/console.css', async (_request, reply) =>
		reply
			.header('cache-control', 'public, max-age=3600')
			.type('text/css; charset=utf-8')
			.send(CONSOLE_CSS),
	);

	loginRoutes(app, { auth, throttle: ctx.authThrottle });

	await app.register(consolePages, { prefix: '/console', ctx, auth, cookie: SESSION_COOKIE });
}
