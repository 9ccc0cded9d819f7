import type { FastifyReply } from 'fastify';
import type { Receipt } from '../contract.ts';
import type { DeliveryStatus } from '../store/types.ts';
import { html } from './html.ts';
import type { Html, Interpolation } from './html.ts';

/** Where the console lives; the admin API keeps the rest of /admin. */
export const CONSOLE = '/admin/console';
export const LOGIN = '/admin/login';
export const ASSETS = `${CONSOLE}/assets`;

export type Section = 'overview' | 'events' | 'dead' | 'catchup' | 'statement';

export interface PageOptions {
	title: string;
	section?: Section;
	/** Present on pages of a logged-in operator: the logout form needs it. */
	csrf?: string;
	notice?: string;
	errors?: readonly string[];
	/** Reload the page every so many seconds (the events and dead-letter pages offer it). */
	refreshSeconds?: number;
}

const NAV: Array<[Section, string, string]> = [
	['overview', 'Overview', CONSOLE],
	['events', 'Events', `${CONSOLE}/events`],
	['dead', 'Dead letters', `${CONSOLE}/dead`],
	['catchup', 'Catch-up', `${CONSOLE}/catchup`],
	['statement', 'Statement', `${CONSOLE}/statement`],
];

/** The whole document around a page's body: header with navigation, notices, then the body. */
export function page(options: PageOptions, body: Interpolation): string {
	const header = options.csrf
		? html`<header>
				<span class="brand">PayPalych relay</span>
				<nav>${NAV.map(([key, label, href]) => html`<a href="${href}"${options.section === key ? html` aria-current="page"` : ''}>${label}</a>`)}</nav>
				<form method="post" action="/admin/logout" class="inline"><input type="hidden" name="_csrf" value="${options.csrf}"><button type="submit">Log out</button></form>
			</header>`
		: html`<header><span class="brand">PayPalych relay</span></header>`;
	return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${options.refreshSeconds ? html`<meta http-equiv="refresh" content="${options.refreshSeconds}">` : ''}
<title>${options.title} · PayPalych relay</title>
<link rel="stylesheet" href="${ASSETS}/console.css">
</head>
<body>
${header}
<main>
${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
${options.errors?.length ? html`<div class="error" role="alert">${options.errors.length === 1 ? options.errors[0] : html`<ul>${options.errors.map((e) => html`<li>${e}</li>`)}</ul>`}</div>` : ''}
${body}
</main>
</body>
</html>`.value;
}

/** UTC, to the second: what every time in the console is written as. */
export const utc = (ms: number | null | undefined): string =>
	ms === null || ms === undefined ? '—' : new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** The value of a datetime-local input for a time (UTC). */
export const inputTime = (ms: number | undefined): string =>
	ms === undefined ? '' : new Date(ms).toISOString().slice(0, 19);

export function duration(ms: number): string {
	const s = Math.max(0, Math.round(ms / 1000));
	if (s < 60) return `${s} s`;
	if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
	if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
	return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

export const badge = (
	status: DeliveryStatus | 'retry' | 'retrying' | 'catch-up',
	label: string = status,
): Html => html`<span class="badge ${status}">${label}</span>`;

/** What each receipt of the PayPalych Trigger means, as the console explains it on hover. */
const RECEIPT_MEANS: Record<Receipt, string> = {
	accepted: 'the PayPalych Trigger started the workflow',
	duplicate: 'the PayPalych Trigger had already received it: the workflow did not run again',
	ignored:
		'the PayPalych Trigger ignored it (a status not selected, or another event): the workflow did not run',
	rejected: 'the PayPalych Trigger refused it: the workflow did not run',
	retry: 'the PayPalych Trigger could not confirm it with the service yet',
};

/**
 * An HTTP status with the trigger's receipt beside it ("200 · duplicate"): what the workflow did.
 * A target that gave no receipt (not the trigger) shows the status alone; no answer shows "—".
 */
export const statusWithReceipt = (status: number | null, receipt: Receipt | null): Html =>
	html`${status ?? '—'}${receipt ? html` · <span class="receipt ${receipt}" title="${RECEIPT_MEANS[receipt]}">${receipt}</span>` : ''}`;

/** A hidden CSRF field plus the page to come back to. */
export const formGuard = (csrf: string, back?: string): Html =>
	html`<input type="hidden" name="_csrf" value="${csrf}">${back ? html`<input type="hidden" name="back" value="${back}">` : ''}`;

export const sendPage = (reply: FastifyReply, code: number, body: string) =>
	reply.code(code).type('text/html; charset=utf-8').send(body);

/** A console path to go back to after an action or a login (never another site); else `fallback`. */
export function safeReturn(value: unknown, fallback: string): string {
	if (typeof value !== 'string' || !value.startsWith(CONSOLE)) return fallback;
	try {
		const url = new URL(value, 'http://relay.invalid');
		if (
			url.origin !== 'http://relay.invalid' ||
			!(url.pathname === CONSOLE || url.pathname.startsWith(`${CONSOLE}/`))
		)
			return fallback;
		return `${url.pathname}${url.search}`;
	} catch {
		return fallback;
	}
}
