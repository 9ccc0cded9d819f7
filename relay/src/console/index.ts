import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ContextOptions } from '../context.ts';
import { html } from './html.ts';
import { describeIssues, loginForm } from './input.ts';
import { CONSOLE, LOGIN, page, safeReturn, sendPage } from './layout.ts';
import { consolePages } from './pages/index.ts';
import { loginPage } from './pages/login.ts';
import { consoleErrorHandler } from './refusal.ts';
import { ConsoleAuth, LOGIN_FORM_TTL_MS, SESSION_TTL_MS } from './session.ts';
import { CONSOLE_CSS } from './style.ts';

export const SESSION_COOKIE = 'relay_console';
export const LOGIN_COOKIE = 'relay_console_login';

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
	const auth = new ConsoleAuth(ctx.config.adminToken, options.now, ctx.store);
	const throttle = ctx.authThrottle;
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

	const cookieOptions = {
		path: '/admin',
		httpOnly: true,
		sameSite: 'strict',
		secure: 'auto',
	} as const;

	const showLogin = (
		reply: FastifyReply,
		code: number,
		next: string | undefined,
		errors: readonly string[] = [],
	) => {
		const form = auth.loginForm();
		reply.setCookie(LOGIN_COOKIE, form.nonce, {
			...cookieOptions,
			path: LOGIN,
			maxAge: LOGIN_FORM_TTL_MS / 1000,
		});
		return sendPage(reply, code, loginPage(form.token, next, errors));
	};

	app.get<{ Querystring: { next?: string } }>('/login', async (request, reply) => {
		const next = safeReturn(request.query.next, '') || undefined;
		if (await auth.check(request.cookies[SESSION_COOKIE]))
			return reply.redirect(next ?? CONSOLE, 303);
		return showLogin(reply, 200, next);
	});

	app.post('/login', async (request, reply) => {
		const body = (request.body ?? {}) as Record<string, unknown>;
		const next = safeReturn(body.next, '') || undefined;
		if (!auth.checkLoginForm(request.cookies[LOGIN_COOKIE], body._csrf)) {
			request.log.warn({ reason: 'login form token' }, 'console login refused');
			return showLogin(reply, 403, next, [
				'This login form has expired or did not come from this relay. Try again on this page.',
			]);
		}
		const parsed = loginForm.safeParse(body);
		if (!parsed.success)
			return showLogin(reply, 400, next, describeIssues(parsed.error, { token: 'Admin token' }));
		const wait = throttle.retryAfter(request.ip);
		if (wait !== undefined) {
			reply.header('retry-after', String(wait));
			return showLogin(reply, 429, next, [
				`Too many wrong tokens from this address. Wait ${Math.ceil(wait / 60)} minute(s) and try again.`,
			]);
		}
		if (!auth.checkToken(parsed.data.token)) {
			throttle.fail(request.ip);
			request.log.warn({ reason: 'wrong token' }, 'console login refused');
			return showLogin(reply, 401, next, ['Wrong admin token.']);
		}
		throttle.clear(request.ip);
		const { cookie } = auth.issue();
		reply.setCookie(SESSION_COOKIE, cookie, { ...cookieOptions, maxAge: SESSION_TTL_MS / 1000 });
		reply.clearCookie(LOGIN_COOKIE, { ...cookieOptions, path: LOGIN });
		request.log.info('console login');
		return reply.redirect(next ?? CONSOLE, 303);
	});

	app.post('/logout', async (request, reply) => {
		const session = await auth.check(request.cookies[SESSION_COOKIE]);
		const body = (request.body ?? {}) as Record<string, unknown>;
		if (session && !auth.checkCsrf(session, body._csrf)) {
			return sendPage(
				reply,
				403,
				page(
					{
						title: 'Refused',
						errors: ['The logout form is missing its CSRF token: you are still logged in.'],
					},
					html`<p><a href="${CONSOLE}">Back to the console</a></p>`,
				),
			);
		}
		if (session) await auth.revokeEverywhere(session);
		reply.clearCookie(SESSION_COOKIE, cookieOptions);
		return reply.redirect(LOGIN, 303);
	});

	await app.register(consolePages, { prefix: '/console', ctx, auth, cookie: SESSION_COOKIE });
}
