import { canonicalStatus, type PostbackFields } from '../shared';

/**
 * The pieces of the trigger that need no n8n context besides the call's memory and body: the
 * status filter of the Statuses parameters and the customer's page of the redirect events.
 */

/** The value of the Statuses parameter that lets statuses the service does not document through. */
export const OTHER_STATUSES = '__other';

/** Whether a status passes the Statuses parameter (an empty selection lets every status through). */
export function statusSelected(
	status: string | undefined,
	selected: readonly string[],
	known: readonly string[],
): boolean {
	if (selected.length === 0) return true;
	const value = canonicalStatus(status);
	if (known.includes(value)) return selected.includes(value);
	return selected.includes(OTHER_STATUSES);
}

/** An absolute http(s) URL the customer may be sent to, or undefined. */
export function safeRedirectUrl(value: unknown): string | undefined {
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	let url: URL;
	try {
		url = new URL(value.trim());
	} catch {
		return undefined;
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
	return url.toString();
}

function escapeHtml(text: string): string {
	return text
		.replace(/&/g, '&amp;')
		.replace(/</g, '&lt;')
		.replace(/>/g, '&gt;')
		.replace(/"/g, '&quot;')
		.replace(/'/g, '&#39;');
}

/** The plain page a customer's browser gets after a redirect when no page URL is set. */
export function customerPage(event: 'success' | 'fail', fields: PostbackFields): string {
	const title = event === 'success' ? 'Payment successful' : 'Payment failed';
	const message =
		event === 'success'
			? 'Thank you, your payment was received.'
			: 'The payment did not go through. No money was taken; you can try again.';
	const order = fields.InvId ? `<p>Order: ${escapeHtml(fields.InvId)}</p>` : '';
	const amount = fields.OutSum
		? `<p>Amount: ${escapeHtml(fields.OutSum)}${fields.CurrencyIn ? ' ' + escapeHtml(fields.CurrencyIn) : ''}</p>`
		: '';
	return (
		'<!doctype html><html lang="en"><head><meta charset="utf-8">' +
		'<meta name="viewport" content="width=device-width, initial-scale=1">' +
		`<title>${title}</title></head><body><h1>${title}</h1><p>${message}</p>${order}${amount}</body></html>`
	);
}
