/*
 * The fields of Bill › Create from the service's current reference (beyond the interface
 * document): checked before any request, and written in the service's form encoding
 * (`request_fields[email]=1`, `items[0][name]=...`).
 */

import type { IDataObject, INode } from 'n8n-workflow';

import { checkAmount, inputError } from './validation';

/** The payer data the payment form can ask for (`request_fields[<name>]=1`). */
export const REQUEST_FIELDS = ['email', 'phone', 'name', 'comment'] as const;

/** The keys an item may have (`items[n][<key>]`). */
const ITEM_KEYS = new Set(['name', 'price', 'quantity', 'category', 'extra']);

/** The longest bill lifetime accepted, in seconds (ten years): a guard against a typo. */
const MAX_TTL_SECONDS = 10 * 366 * 24 * 3600;

const isBlank = (value: unknown) =>
	value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

/** TTL: a positive whole number of seconds (a number or its digits). */
export function checkTtl(node: INode, value: unknown, itemIndex: number): string | undefined {
	if (isBlank(value)) return undefined;
	const text =
		typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
	const seconds = /^\d+$/.test(text) ? Number(text) : Number.NaN;
	if (!Number.isSafeInteger(seconds) || seconds <= 0 || seconds > MAX_TTL_SECONDS) {
		throw inputError(
			node,
			'TTL',
			`must be a positive whole number of seconds (got ${JSON.stringify(value)})`,
			itemIndex,
			'The lifetime of the bill in seconds, such as 600 for ten minutes or 86400 for a day',
		);
	}
	return String(seconds);
}

/** A payer email address: one @, no spaces, a dot in the domain. */
export function checkEmail(
	node: INode,
	field: string,
	value: unknown,
	itemIndex: number,
): string | undefined {
	if (isBlank(value)) return undefined;
	const text = typeof value === 'string' ? value.trim() : '';
	if (!/^[^\s@]+@[^\s@]+\.[^\s@.]+$/.test(text) || text.length > 254) {
		throw inputError(
			node,
			field,
			`must be an email address such as payer@example.com (got ${JSON.stringify(value)})`,
			itemIndex,
		);
	}
	return text;
}

/** A page address: an absolute http(s) URL. */
export function checkUrl(
	node: INode,
	field: string,
	value: unknown,
	itemIndex: number,
): string | undefined {
	if (isBlank(value)) return undefined;
	const text = typeof value === 'string' ? value.trim() : '';
	let url: URL | undefined;
	try {
		url = new URL(text);
	} catch {
		url = undefined;
	}
	if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
		throw inputError(
			node,
			field,
			`must be a full http:// or https:// address such as https://shop.example/thanks (got ${JSON.stringify(value)})`,
			itemIndex,
		);
	}
	return text;
}

/** Request Fields (a list of REQUEST_FIELDS names) as `request_fields[<name>]=1`. */
export function requestFieldsBody(
	node: INode,
	value: unknown,
	itemIndex: number,
): Record<string, string> {
	if (isBlank(value)) return {};
	const names =
		typeof value === 'string'
			? value.split(',').map((name) => name.trim())
			: Array.isArray(value)
				? value.map((name) => (typeof name === 'string' ? name.trim() : String(name)))
				: undefined;
	const body: Record<string, string> = {};
	for (const name of names ?? [JSON.stringify(value)]) {
		if (name === '') continue;
		if (!(REQUEST_FIELDS as readonly string[]).includes(name.toLowerCase())) {
			throw inputError(
				node,
				'Request Fields',
				`must name only ${REQUEST_FIELDS.join(', ')} (got ${JSON.stringify(name)})`,
				itemIndex,
			);
		}
		body[`request_fields[${name.toLowerCase()}]`] = '1';
	}
	return body;
}

function itemText(node: INode, value: unknown, what: string, itemIndex: number): string {
	if (typeof value === 'number') return String(value);
	if (typeof value === 'string') return value.trim();
	throw inputError(node, 'Items', `${what} must be text (got ${JSON.stringify(value)})`, itemIndex);
}

/** One item as form fields `items[n][...]`, checked. */
function itemBody(
	node: INode,
	item: unknown,
	n: number,
	itemIndex: number,
): Record<string, string> {
	const where = `item ${n + 1}`;
	if (typeof item !== 'object' || item === null || Array.isArray(item)) {
		throw inputError(
			node,
			'Items',
			`${where} must be an object with name, price and quantity (got ${JSON.stringify(item)})`,
			itemIndex,
		);
	}
	const record = item as IDataObject;
	const unknown = Object.keys(record).filter((key) => !ITEM_KEYS.has(key));
	if (unknown.length > 0) {
		throw inputError(
			node,
			'Items',
			`${where} has unknown fields ${unknown.join(', ')}: use name, price, quantity, category and extra`,
			itemIndex,
		);
	}
	const name = isBlank(record.name)
		? ''
		: itemText(node, record.name, `${where}'s name`, itemIndex);
	if (name === '') throw inputError(node, 'Items', `${where} needs a name`, itemIndex);
	const price = checkAmount(node, record.price, itemIndex, `Items: ${where}'s price`);
	const quantityText = isBlank(record.quantity)
		? ''
		: itemText(node, record.quantity, `${where}'s quantity`, itemIndex);
	const quantity = /^\d+(\.\d{1,3})?$/.test(quantityText) ? Number(quantityText) : Number.NaN;
	if (!(quantity > 0)) {
		throw inputError(
			node,
			'Items',
			`${where}'s quantity must be a positive number with at most 3 decimals (got ${JSON.stringify(record.quantity ?? '')})`,
			itemIndex,
		);
	}
	const prefix = `items[${n}]`;
	const body: Record<string, string> = {
		[`${prefix}[name]`]: name,
		[`${prefix}[price]`]: price,
		[`${prefix}[quantity]`]: quantityText,
	};
	if (!isBlank(record.category))
		body[`${prefix}[category]`] = itemText(node, record.category, `${where}'s category`, itemIndex);
	if (!isBlank(record.extra)) {
		const extra = record.extra;
		if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) {
			throw inputError(
				node,
				'Items',
				`${where}'s extra must be an object of names and values (got ${JSON.stringify(extra)})`,
				itemIndex,
			);
		}
		for (const [key, value] of Object.entries(extra)) {
			if (!/^[A-Za-z0-9_-]+$/.test(key)) {
				throw inputError(
					node,
					'Items',
					`${where}'s extra has a name with other characters than letters, digits, _ and - (${JSON.stringify(key)})`,
					itemIndex,
				);
			}
			body[`${prefix}[extra][${key}]`] = itemText(
				node,
				value,
				`${where}'s extra ${key}`,
				itemIndex,
			);
		}
	}
	return body;
}

/**
 * The bill's items, from a JSON list (Items (JSON): text or an already parsed list) or from the
 * Items fixed collection (`{ item: [...] }`), never both, as `items[n][...]` form fields.
 */
export function itemsBody(
	node: INode,
	json: unknown,
	collection: unknown,
	itemIndex: number,
): Record<string, string> {
	const fromCollection =
		typeof collection === 'object' && collection !== null && !Array.isArray(collection)
			? (((collection as IDataObject).item as unknown[] | undefined) ?? [])
			: [];
	let fromJson: unknown[] = [];
	if (!isBlank(json)) {
		let parsed: unknown = json;
		if (typeof json === 'string') {
			try {
				parsed = JSON.parse(json);
			} catch (error) {
				throw inputError(
					node,
					'Items (JSON)',
					`is not valid JSON: ${(error as Error).message}`,
					itemIndex,
					'Give a list such as [{"name": "T-shirt", "price": "990.00", "quantity": 1}]',
				);
			}
		}
		if (!Array.isArray(parsed)) {
			throw inputError(
				node,
				'Items (JSON)',
				'must be a list of items such as [{"name": "T-shirt", "price": "990.00", "quantity": 1}]',
				itemIndex,
			);
		}
		fromJson = parsed;
	}
	if (fromJson.length > 0 && fromCollection.length > 0) {
		throw inputError(
			node,
			'Items',
			'are given twice: use either Items or Items (JSON), not both',
			itemIndex,
		);
	}
	const list = fromJson.length > 0 ? fromJson : fromCollection;
	const body: Record<string, string> = {};
	list.forEach((item, n) => Object.assign(body, itemBody(node, item, n, itemIndex)));
	return body;
}
