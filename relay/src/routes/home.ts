import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PAGE_STYLE } from './page.ts';

/** What the relay is, for the one who opens its address: the same words as a page and as JSON. */
export const ABOUT = {
	name: 'paypalych-relay',
	description:
		"Receives PayPalych's postbacks and redirects, verifies and stores each one, and forwards it to the shop's n8n workflows until they take it.",
	routes: {
		postbacks: ['POST /postback/payment', 'POST /postback/payout'],
		redirects: ['POST /redirect/success', 'POST /redirect/fail'],
		health: 'GET /healthz',
		readiness: 'GET /readyz',
		console: 'GET /admin/console',
	},
	documentation:
		'https://github.com/n8n-nodes-paypalych/n8n-nodes-paypalych/tree/main/docs/operator',
} as const;

const HOME_HEADERS = {
	'content-security-policy':
		"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
	'x-content-type-options': 'nosniff',
	'referrer-policy': 'no-referrer',
};

const HOME_PAGE =
	`<!doctype html><html lang="en"><head><meta charset="utf-8">` +
	`<meta name="viewport" content="width=device-width,initial-scale=1"><title>PayPalych relay</title>` +
	`<style>${PAGE_STYLE}p+p{margin-top:.75rem}code{font-size:.9em}</style></head><body><main>` +
	`<h1>PayPalych relay</h1>` +
	`<p>This address receives PayPalych's postbacks and redirects, verifies and stores each one, and forwards it to the shop's n8n workflows until they take it.</p>` +
	`<p>There is nothing here for a customer: your payment's page is the shop's.</p>` +
	`<p>Operators: the console is at <code>/admin/console</code>; health at <code>/healthz</code> and <code>/readyz</code>.</p>` +
	`</main></body></html>`;

/** JSON when the client asks for it (`Accept: application/json`, not HTML); a page otherwise. */
export function wantsJson(request: FastifyRequest): boolean {
	const accept = (request.headers.accept ?? '').toLowerCase();
	return /\bapplication\/(?:[\w.+-]*\+)?json\b/.test(accept) && !accept.includes('text/html');
}

/**
 * The relay's root: what it is (no 404 for someone who opens the address the service calls). It
 * names no version, target or setting: the root is as public as the postback routes.
 */
export async function homeRoutes(app: FastifyInstance): Promise<void> {
	app.get('/', async (request, reply) => {
		reply.headers(HOME_HEADERS).header('vary', 'Accept');
		if (wantsJson(request)) return reply.type('application/json; charset=utf-8').send(ABOUT);
		return reply.type('text/html; charset=utf-8').send(HOME_PAGE);
	});
}
