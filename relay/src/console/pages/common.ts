import type { FastifyRequest } from 'fastify';
import type { RelayContext } from '../../context.ts';
import { noticeQuery } from '../input.ts';

/** Rows per page of the events and dead-letter lists. */
export const PAGE_SIZE = 50;

/** What every page's routes get from the console's pages plugin. */
export interface PageDeps {
	ctx: RelayContext;
	/** The logged-in operator's CSRF token (every page carries it for its forms). */
	csrfOf: (request: FastifyRequest) => string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The text of a notice named in the query after an action (fixed sentences, numbers only). */
export function noticeText(query: unknown): string | undefined {
	const q = noticeQuery.safeParse(query);
	if (!q.success || !q.data.notice) return undefined;
	const n = q.data.n ?? 0;
	const m = q.data.m ?? 0;
	if (q.data.notice === 'requeued')
		return `Requeued ${plural(n, 'dead delivery', 'dead deliveries')}: pending again, with a fresh retry budget.`;
	return `Replayed ${plural(n, 'event', 'events')}: ${plural(m, 'new delivery', 'new deliveries')}.`;
}

/** A console path with the notice an action leaves for the page it redirects to. */
export function withNotice(path: string, notice: string, n: number, m?: number): string {
	const url = new URL(path, 'http://relay.invalid');
	url.searchParams.set('notice', notice);
	url.searchParams.set('n', String(n));
	if (m !== undefined) url.searchParams.set('m', String(m));
	return `${url.pathname}${url.search}`;
}
