// Signing in to the relay console as a browser does: the login form's token and cookie, then the
// post; and reading the cookies an answer sets.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { ADMIN_TOKEN, form } from './helpers.ts';

export const FORM = 'application/x-www-form-urlencoded';

/** name=value of a Set-Cookie header in a response, or undefined. */
export function cookieOf(res: LightMyRequestResponse, name: string): string | undefined {
	const headers = ([] as string[]).concat(
		(res.headers['set-cookie'] as string | string[] | undefined) ?? [],
	);
	const line = headers.find((h) => h.startsWith(`${name}=`));
	return line?.split(';')[0];
}
export function setCookieLine(res: LightMyRequestResponse, name: string): string {
	const headers = ([] as string[]).concat(
		(res.headers['set-cookie'] as string | string[] | undefined) ?? [],
	);
	return headers.find((h) => h.startsWith(`${name}=`)) ?? '';
}
/** The CSRF token of a console page's form. */
export const csrfIn = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)?.[1] ?? '';

/** What a browser does: open the login form, then post it (with its token and cookie) and `fields`. */
export async function submitLogin(
	app: FastifyInstance,
	fields: Record<string, string>,
	headers: Record<string, string> = {},
	remoteAddress?: string,
) {
	const page = await app.inject({ url: '/admin/login', headers, remoteAddress });
	return app.inject({
		method: 'POST',
		url: '/admin/login',
		remoteAddress,
		headers: {
			...headers,
			cookie: cookieOf(page, 'relay_console_login') ?? '',
			'content-type': FORM,
		},
		payload: form({ _csrf: csrfIn(page.body), ...fields }),
	});
}

/** Signs in with the admin token; the reader it returns fetches a console page and expects 200. */
export async function consoleReader(
	app: FastifyInstance,
): Promise<(url: string) => Promise<string>> {
	const login = await submitLogin(app, { token: ADMIN_TOKEN });
	const cookie = cookieOf(login, 'relay_console') ?? '';
	return async (url: string) => {
		const res = await app.inject({ url, headers: { cookie } });
		expect(res.statusCode, url).toBe(200);
		return res.body;
	};
}
