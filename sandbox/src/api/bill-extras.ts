/**
 * The fields bill/create takes beyond the interface document (docs/developer/service.md): `ttl`,
 * `locale`, `payer_email`, `success_url`, `fail_url`, `return_url`, `request_fields[...]` and
 * `items[n][...]`, validated the Laravel way (every rule, one 422 with every field's message).
 * Nested fields come as bracketed form names (`items[0][name]`) or as JSON objects and lists.
 */
import { parseAmount } from '../money.ts';
import type { BillExtras, BillItem, Shop } from '../model.ts';
import type { Input } from '../validate.ts';

const TEXT = (value: unknown): value is string => typeof value === 'string';
const MAX_ITEMS = 100;
const MAX_REQUEST_FIELDS = 20;
const NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * The nested value of `name`: the input's own (a JSON object or list), else the bracketed form
 * fields (`name[a][b]=v`) gathered into objects. Keys keep their order of appearance.
 */
export function nested(input: Input, name: string): unknown {
	if (input[name] !== undefined) return input[name];
	let found = false;
	const root: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(input)) {
		if (!key.startsWith(`${name}[`)) continue;
		const path = [...key.slice(name.length).matchAll(/\[([^\][]*)\]/g)].map((m) => m[1] ?? '');
		const rebuilt = `${name}${path.map((part) => `[${part}]`).join('')}`;
		if (path.length === 0 || rebuilt !== key) continue;
		found = true;
		let node = root;
		for (const [index, part] of path.entries()) {
			if (part === '__proto__' || part === 'constructor' || part === 'prototype') break;
			if (index === path.length - 1) node[part] = value;
			else {
				const next = node[part];
				if (next === null || typeof next !== 'object') node[part] = {};
				node = node[part] as Record<string, unknown>;
			}
		}
	}
	return found ? root : undefined;
}

function isUrl(text: string): URL | null {
	try {
		const url = new URL(text);
		return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
	} catch {
		return null;
	}
}

const onDomain = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** The extras of a bill/create input, or the Laravel messages of the fields that fail. */
export function billExtras(
	input: Input,
	shop: Pick<Shop, 'domain'> | undefined,
): { extras: BillExtras; errors: Record<string, string> } {
	const errors: Record<string, string> = {};
	const extras: BillExtras = {};
	scalarExtras(input, shop, extras, errors);
	requestFieldsExtra(input, extras, errors);
	itemsExtra(input, extras, errors);
	return { extras, errors };
}

/** `ttl`, `locale`, `payer_email` and the three URLs. */
function scalarExtras(
	input: Input,
	shop: Pick<Shop, 'domain'> | undefined,
	extras: BillExtras,
	errors: Record<string, string>,
): void {
	const ttl = input['ttl'];
	if (ttl !== undefined) {
		const text = typeof ttl === 'number' ? String(ttl) : ttl;
		if (!TEXT(text) || !/^\d{1,9}$/.test(text.trim()))
			errors['ttl'] = 'The :attribute field must be an integer.';
		else if (Number(text) < 1) errors['ttl'] = 'The :attribute field must be at least 1.';
		else extras.ttl = Number(text);
	}
	const locale = input['locale'];
	if (locale !== undefined) {
		if (locale === 'ru' || locale === 'en') extras.locale = locale;
		else errors['locale'] = 'The selected :attribute is invalid.';
	}
	const email = input['payer_email'];
	if (email !== undefined) {
		if (TEXT(email) && email.length <= 255 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
			extras.payerEmail = email;
		else errors['payer_email'] = 'The :attribute field must be a valid email address.';
	}
	for (const [field, key] of [
		['success_url', 'successUrl'],
		['fail_url', 'failUrl'],
		['return_url', 'returnUrl'],
	] as const) {
		const value = input[field];
		if (value === undefined) continue;
		const url = TEXT(value) && value.length <= 2048 ? isUrl(value) : null;
		if (!url) errors[field] = 'The :attribute field must be a valid URL.';
		else if (field === 'return_url' && shop?.domain && !onDomain(url.hostname, shop.domain))
			errors[field] = `The :attribute field must be on the shop's domain ${shop.domain}.`;
		else extras[key] = value as string;
	}
}

/** `request_fields[name]` (1 or 0 each), or a JSON object of booleans. */
function requestFieldsExtra(
	input: Input,
	extras: BillExtras,
	errors: Record<string, string>,
): void {
	const requested = nested(input, 'request_fields');
	if (requested !== undefined) {
		const entries =
			requested !== null && typeof requested === 'object' && !Array.isArray(requested)
				? Object.entries(requested)
				: null;
		const flags: Record<string, boolean> = {};
		let bad = entries === null || entries.length > MAX_REQUEST_FIELDS;
		for (const [name, value] of entries ?? []) {
			const flag = ['1', 'true', 1, true].includes(value as string)
				? true
				: ['0', 'false', 0, false].includes(value as string)
					? false
					: null;
			if (!NAME.test(name) || flag === null) bad = true;
			else flags[name] = flag;
		}
		if (bad)
			errors['request_fields'] = 'The :attribute field must be a list of field names, each 1 or 0.';
		else extras.requestFields = flags;
	}
}

/** `items[n][...]`, or a JSON list of item objects: every item checked, kept only when all pass. */
function itemsExtra(input: Input, extras: BillExtras, errors: Record<string, string>): void {
	const rawItems = nested(input, 'items');
	if (rawItems !== undefined) {
		const list = Array.isArray(rawItems)
			? rawItems
			: rawItems !== null && typeof rawItems === 'object'
				? Object.values(rawItems)
				: null;
		if (list === null || list.length === 0 || list.length > MAX_ITEMS) {
			errors['items'] = `The :attribute field must be a list of 1 to ${MAX_ITEMS} items.`;
		} else {
			const items: BillItem[] = [];
			list.forEach((raw, index) => {
				const item = itemOf(raw, index, errors);
				if (item) items.push(item);
			});
			if (!Object.keys(errors).some((key) => key.startsWith('items'))) extras.items = items;
		}
	}
}

/** One item of `items`, or null with its fields' messages added to `errors`. */
function itemOf(raw: unknown, index: number, errors: Record<string, string>): BillItem | null {
	const at = (field: string) => `items.${index}.${field}`;
	if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
		errors[`items.${index}`] = 'The :attribute field must be an array.';
		return null;
	}
	const item = raw as Record<string, unknown>;
	const name = item['name'];
	const price = item['price'];
	const quantity = item['quantity'];
	let ok = true;
	if (name === undefined || name === '') {
		errors[at('name')] = 'The :attribute field is required.';
		ok = false;
	} else if (!TEXT(name) || name.length > 255) {
		errors[at('name')] = 'The :attribute field must be a string.';
		ok = false;
	}
	const cents = TEXT(price) || typeof price === 'number' ? parseAmount(String(price)) : null;
	if (price === undefined || price === '') {
		errors[at('price')] = 'The :attribute field is required.';
		ok = false;
	} else if (!cents || !cents.ok) {
		errors[at('price')] = 'The :attribute field must be a number greater than 0.';
		ok = false;
	}
	const qty = typeof quantity === 'number' ? String(quantity) : quantity;
	if (qty === undefined || qty === '') {
		errors[at('quantity')] = 'The :attribute field is required.';
		ok = false;
	} else if (!TEXT(qty) || !/^\d{1,6}(?:\.\d{1,3})?$/.test(qty) || Number(qty) <= 0) {
		errors[at('quantity')] = 'The :attribute field must be a number greater than 0.';
		ok = false;
	}
	const more: Record<string, string> = {};
	for (const [key, value] of Object.entries(item)) {
		if (key === 'name' || key === 'price' || key === 'quantity') continue;
		if (!NAME.test(key) || !(TEXT(value) || typeof value === 'number')) {
			errors[at(key)] = 'The :attribute field must be a string.';
			ok = false;
		} else more[key] = String(value);
	}
	return ok && cents?.ok
		? { name: name as string, price: cents.cents, quantity: qty as string, more }
		: null;
}
