import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ContextOptions } from '../context.ts';
import { html } from './html.ts';
import { describeIssues, loginForm } from './input.ts';
import { CONSOLE, LOGIN, page, safeReturn, sendPage } from './layout.ts';
import { consolePages } from './pages.ts';
import { loginPage } from './pages/login.ts';
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

/** Wrong admin tokens per client address: after this many in the window, logins wait. */
const MAX_FAILED_LOGINS = 10;
const FAILED_LOGIN_WINDOW_MS = 15 * 60_000;

class LoginThrottle {
	readonly #failures = new Map<string, { n: number; since: number }>();
	blocked(ip: string, now: number): boolean {
		const f = this.#failures.get(ip);
		return !!f && now - f.since < FAILED_LOGIN_WINDOW_MS && f.n >= MAX_FAILED_LOGINS;
	}
	fail(ip: string, now: number): void {
		for (const [key, f] of this.#failures)
			if (now - f.since >= FAILED_LOGIN_WINDOW_MS) this.#failures.delete(key);
		const f = this.#failures.get(ip);
		if (f) f.n += 1;
		else if (this.#failures.size < 10_000) this.#failures.set(ip, { n: 1, since: now });
	}
	clear(ip: string): void {
		this.#failures.delete(ip);
	}
}

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
	const auth = new ConsoleAuth(ctx.config.adminToken, options.now);
	const throttle = new LoginThrottle();
	await app.register(fastifyCookie);
	await app.register(fastifyFormbody, { bodyLimit: 16_384 });

	app.addHook('onRequest', async (_request, reply) => {
		reply.headers(SECURITY_HEADERS);
	});

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
		if (auth.verify(request.cookies[SESSION_COOKIE])) return reply.redirect(next ?? CONSOLE, 303);
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
		const now = Date.now();
		if (throttle.blocked(request.ip, now)) {
			return showLogin(reply, 429, next, [
				'Too many wrong tokens from this address. Wait 15 minutes and try again.',
			]);
		}
		if (!auth.checkToken(parsed.data.token)) {
			throttle.fail(request.ip, now);
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
		const session = auth.verify(request.cookies[SESSION_COOKIE]);
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
		if (session) auth.revoke(session);
		reply.clearCookie(SESSION_COOKIE, cookieOptions);
		return reply.redirect(LOGIN, 303);
	});

	await app.register(consolePages, { prefix: '/console', ctx, auth, cookie: SESSION_COOKIE });
}
