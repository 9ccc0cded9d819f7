import type { FastifyInstance, FastifyReply } from 'fastify';
import { isBreakGlass, refusalSentence } from '../../auth-throttle.ts';
import type { AuthThrottle } from '../../auth-throttle.ts';
import { html } from '../html.ts';
import { describeIssues, loginForm } from '../input.ts';
import { CONSOLE, LOGIN, page, safeReturn, sendPage } from '../layout.ts';
import { LOGIN_FORM_TTL_MS, SESSION_TTL_MS } from '../session.ts';
import type { ConsoleAuth } from '../session.ts';

export const SESSION_COOKIE = 'relay_console';
export const LOGIN_COOKIE = 'relay_console_login';

export function loginPage(
	csrf: string,
	next: string | undefined,
	errors: readonly string[] = [],
): string {
	return page(
		{ title: 'Log in', errors },
		html`<div class="login card">
			<h1>Relay console</h1>
			<p class="muted">Give the relay's admin token (<code>RELAY_ADMIN_TOKEN</code>). The browser keeps a signed login cookie, never the token.</p>
			<form method="post" action="${LOGIN}">
				<input type="hidden" name="_csrf" value="${csrf}">
				${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
				<label>Admin token <input type="password" name="token" autocomplete="off" required autofocus></label>
				<button type="submit">Log in</button>
			</form>
		</div>`,
	);
}

/** The console's cookies: only for /admin, never to scripts, never cross-site. */
const cookieOptions = {
	path: '/admin',
	httpOnly: true,
	sameSite: 'strict',
	secure: 'auto',
} as const;

/** Log in (the admin token for a session cookie, behind a one-time form token) and log out. */
export function loginRoutes(
	app: FastifyInstance,
	{ auth, throttle }: { auth: ConsoleAuth; throttle: AuthThrottle },
): void {
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
		const refused = await throttle.refusal(request.ip, { breakGlass: isBreakGlass(request) });
		if (refused !== undefined) {
			reply.header('retry-after', String(refused.retryAfter));
			return showLogin(reply, 429, next, [refusalSentence(refused)]);
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
	logoutRoute(app, auth);
}

/** Log out: this session everywhere (every instance, every restart); needs the CSRF token. */
function logoutRoute(app: FastifyInstance, auth: ConsoleAuth): void {
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
}
