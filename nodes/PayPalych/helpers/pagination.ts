import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	API_PREFIX,
	apiRootOf,
	listUrl,
	normalizeBaseUrl,
	readPages,
	type Endpoint,
	type ReadPagesResult,
} from '../../shared';
import type { PayPalychContext } from '../transport';
import { CREDENTIAL_NAME, apiRequest } from '../transport';

/** Rows asked for per page (`per_page`; a service that pages by itself may ignore it). */
export const PAGE_SIZE = 100;

export interface ListOptions {
	/** Stop once this many rows are kept; undefined: every row. */
	limit?: number;
	/** Only rows it accepts are kept and counted towards the limit (a date filter). */
	keep?: (row: IDataObject) => boolean;
	/** What the list is, for an error: "Bill › Search". */
	label: string;
	/**
	 * Whether a list that could not be read to its end is an error (default) or what was read is
	 * returned (a resource locator's list of recent entries).
	 */
	partialOk?: boolean;
	/** What an incomplete list means for the operation, added to the error's description. */
	incomplete?: string;
	/** What to do when the page cap is reached (default: narrow the date range). */
	capAdvice?: string;
}

/** Where a refused next page pointed: its scheme, host, port and path (never its query). */
function addressOf(url: string | undefined): string {
	if (url === undefined) return 'another address';
	try {
		const parsed = new URL(url);
		return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
	} catch {
		return JSON.stringify(url.slice(0, 100));
	}
}

/**
 * Reads a list endpoint (`data` array) with the wire contract's pagination (`readPages`): the
 * service's `links.next` (on the credential's own API root only), a `meta.next_cursor`, or
 * `meta.current_page` / `last_page`. A list that stopped before its end (a `links.next` to another
 * host, the page cap) is an error unless `partialOk`: a search must never look complete when it
 * is not.
 */
export async function listAll(
	this: PayPalychContext,
	endpoint: Endpoint,
	qs: Record<string, string>,
	options: ListOptions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const credentials = await this.getCredentials(CREDENTIAL_NAME);
	const base = normalizeBaseUrl(credentials.baseUrl);
	const perPage =
		options.limit === undefined ? PAGE_SIZE : Math.min(PAGE_SIZE, Math.max(1, options.limit));
	const result: ReadPagesResult<IDataObject> = await readPages<IDataObject>(
		async (url) => await apiRequest.call(this, endpoint, { url, itemIndex }),
		{
			firstUrl: listUrl(base, endpoint.path, { ...qs, per_page: perPage }),
			apiRoot: apiRootOf(base),
			keep: options.keep,
			limit: options.limit,
		},
	);
	if (result.complete || options.partialOk === true) return result.rows;
	const why =
		result.end === 'refused_next'
			? `the service named its next page at ${addressOf(result.refusedNext)}, outside the credential's Base URL (${base}${API_PREFIX}/), and the API token is never sent there`
			: `it has more than ${result.pages} pages`;
	const advice =
		result.end === 'refused_next'
			? "Check the credential's Base URL: it must be the address the service itself uses in its answers (scheme, host and port)."
			: (options.capAdvice ?? 'Narrow the date range.');
	throw new NodeOperationError(
		this.getNode(),
		`${options.label} could not read the whole list: ${why}`,
		{ itemIndex, description: [options.incomplete, advice].filter(Boolean).join(' ') },
	);
}
