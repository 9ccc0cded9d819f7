import { describe, expect, it } from 'vitest';

import { apiErrorKeyOf, describeApiError, ERROR_CATALOGUE } from '../../dist/nodes/shared/index.js';

// The one reader of an error answer's key, used by the node, the trigger and the relay: the
// key wherever the service puts it (the interface document's `message`, and the other fields
// public clients of the live service read).
describe('the error reader', () => {
	const key = 'api:error.payout_not_found';
	const forms: Array<[string, unknown]> = [
		['message', { success: false, message: key }],
		['error', { success: false, error: key }],
		['error_code', { success: false, error_code: key }],
		['error_code without its prefix', { success: false, error_code: 'payout_not_found' }],
		['error without its prefix', { error: 'payout_not_found' }],
		['error_message', { success: false, error_message: `Payout not found (${key})` }],
		['errors as a string', { errors: key }],
		['errors as a list', { errors: [key] }],
		['errors as field messages', { message: 'The given data was invalid.', errors: { id: [key] } }],
		['a JSON text', JSON.stringify({ error_code: key, error_message: 'Payout not found' })],
		[
			'error_code beside a message without a key',
			{ message: 'Not found', error_code: key, error_message: 'Payout not found' },
		],
	];
	for (const [name, body] of forms) {
		it(`finds the key in ${name}`, () => {
			expect(apiErrorKeyOf(body)).toBe(key);
			const described = describeApiError(404, body);
			expect(described.key).toBe(key);
			expect(described.message).toBe(`${key}: ${ERROR_CATALOGUE[key].message}`);
		});
	}

	it('reads message first, then error, error_code, error_message, errors', () => {
		expect(
			apiErrorKeyOf({
				message: 'api:error.bill_not_found',
				error_code: 'api:error.payment_not_found',
			}),
		).toBe('api:error.bill_not_found');
		expect(
			apiErrorKeyOf({ error_code: 'payment_not_found', errors: ['api:error.bill_not_found'] }),
		).toBe('api:error.payment_not_found');
	});

	it('takes a bare name only from a code field, and only when the catalogue knows it', () => {
		expect(apiErrorKeyOf({ message: 'payout_not_found' })).toBeUndefined();
		expect(apiErrorKeyOf({ error_code: 'something_else' })).toBeUndefined();
		expect(describeApiError(400, { error_code: 'something_else' }).key).toBe('http_400');
	});

	it('reads the 401 form and the unauthorized form from any of the fields', () => {
		expect(describeApiError(401, { message: 'Unauthenticated.' }).key).toBe('Unauthenticated');
		expect(describeApiError(401, { error: 'Unauthenticated.' }).key).toBe('Unauthenticated');
		expect(describeApiError(401, '').key).toBe('Unauthenticated');
		expect(describeApiError(403, { error_message: 'This action is unauthorized.' }).key).toBe(
			'This action is unauthorized',
		);
	});

	it("keeps Laravel field errors and the service's own text", () => {
		const laravel = describeApiError(422, {
			message: 'The amount field is required.',
			errors: { amount: ['The amount field is required.'] },
		});
		expect(laravel.key).toBe('invalid_request_data');
		expect(laravel.description).toContain('amount: The amount field is required.');
		const coded = describeApiError(404, { error_code: key, error_message: 'Выплата не найдена' });
		expect(coded.description).toContain('Service said: Выплата не найдена');
	});

	it('explains ip_access_denied and transaction_rejected to the merchant', () => {
		const denied = describeApiError(403, { message: 'api:error.ip_access_denied' });
		expect(denied.key).toBe('api:error.ip_access_denied');
		expect(denied.description).toContain(
			"Add this server's address to the API allow-list in your merchant account",
		);
		const rejected = describeApiError(400, { error_code: 'api:error.transaction_rejected' });
		expect(rejected.key).toBe('api:error.transaction_rejected');
		expect(rejected.message).toBe(
			`api:error.transaction_rejected: ${ERROR_CATALOGUE['api:error.transaction_rejected'].message}`,
		);
	});
});

// Fifth security round: an error answer is the service's (or whoever answers in its place) and
// may carry any key and value. The reader returns a key of the catalogue or the generic fallback
// (`http_<code>`, `invalid_request_data`, `network_error`), never a property every object
// inherits, never throws, and reads a bounded part of what it is given.
describe('F5-1 the error reader on hostile error answers', () => {
	const generic = /^(http_\d+|invalid_request_data|network_error|Unauthenticated)$/;
	const own = (key: string) => Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, key);
	const inherited = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
	const names = [
		...inherited,
		...inherited.map((n) => `api:error.${n}`),
		...inherited.map((n) => `${n}.`),
		'api:error.not_in_the_catalogue',
	];
	const fields = ['message', 'error', 'error_code', 'error_message', 'errors'];
	const bodies: Array<[string, unknown]> = [];
	for (const name of names) {
		for (const field of fields) {
			bodies.push([`${field}: ${JSON.stringify(name)}`, { [field]: name }]);
			bodies.push([`${field}: [${JSON.stringify(name)}]`, { [field]: [name] }]);
			bodies.push([`${field}: {x: ${JSON.stringify(name)}}`, { [field]: { x: name } }]);
		}
		bodies.push([`the text ${JSON.stringify(name)}`, name]);
	}
	const JSONtext = (text: string) => JSON.parse(text) as unknown;
	const hostile: Array<[string, unknown]> = [
		...bodies,
		['a number', 42],
		['message: a number', { message: 42 }],
		['error_code: a number', { error_code: 404, error_message: 7 }],
		[
			'message: an object',
			{ message: { nested: { deeper: { deepest: 'api:error.bill_not_found' } } } },
		],
		['message: an array of arrays', { message: [[[['api:error.bill_not_found']]]] }],
		['an array', ['api:error.bill_not_found']],
		['null', null],
		['true', true],
		['the JSON text null', 'null'],
		[
			'errors: a field named __proto__',
			JSONtext('{"errors":{"__proto__":["x"],"constructor":["y"]}}'),
		],
		[
			'errors: a value whose toString is no function',
			{ errors: { amount: { toString: 1, valueOf: 1 } } },
		],
		['errors: values whose toString is no function', { errors: { amount: [{ toString: 1 }] } }],
		[
			'errors: a key __proto__ as JSON text',
			'{"message":"x","errors":{"__proto__":{"toString":1}}}',
		],
		['message: __proto__ as JSON text', '{"__proto__":{"message":"api:error.bill_not_found"}}'],
	];
	for (const [name, body] of hostile) {
		it(`gives a catalogue key or the generic fallback for ${name}`, () => {
			for (const code of [undefined, 400, 404, 422, 500]) {
				const key = apiErrorKeyOf(body);
				if (key !== undefined) expect(own(key), `${name}: ${key}`).toBe(true);
				const described = describeApiError(code, body);
				expect(own(described.key) || generic.test(described.key), described.key).toBe(true);
				expect(typeof described.message).toBe('string');
				expect(typeof described.description).toBe('string');
				expect(inherited).not.toContain(described.key);
			}
		});
	}

	it('a key of the catalogue after a hostile one is still found; an inherited name never is', () => {
		expect(apiErrorKeyOf({ message: 'api:error.__proto__ then api:error.bill_not_found' })).toBe(
			'api:error.bill_not_found',
		);
		expect(apiErrorKeyOf({ message: 'constructor', error_code: 'bill_not_found' })).toBe(
			'api:error.bill_not_found',
		);
		expect(apiErrorKeyOf({ error_code: '__proto__' })).toBeUndefined();
		expect(apiErrorKeyOf({ error_code: 'constructor' })).toBeUndefined();
		expect(describeApiError(404, { message: 'toString' }).key).toBe('http_404');
		// The service's unknown key stays readable in the sentence.
		expect(describeApiError(400, { message: 'api:error.not_in_the_catalogue' }).message).toBe(
			'http_400: api:error.not_in_the_catalogue',
		);
	});

	it('field errors are own fields as text, never calling a value of the answer', () => {
		const described = describeApiError(
			422,
			JSON.parse('{"errors":{"__proto__":["a"],"amount":{"toString":1},"n":[1,{"x":2}]}}'),
		);
		expect(described.key).toBe('invalid_request_data');
		expect(Object.getPrototypeOf(described.fieldErrors)).toBe(Object.prototype);
		expect(Object.keys(described.fieldErrors ?? {})).toEqual(['__proto__', 'amount', 'n']);
		expect(described.fieldErrors?.amount).toEqual(['{"toString":1}']);
		expect(described.fieldErrors?.n).toEqual(['1', '{"x":2}']);
		expect(({} as Record<string, unknown>).a).toBeUndefined();
	});

	it('a 10 MB answer is read in bounded time, and what is shown of it is bounded', () => {
		const big = 'x'.repeat(10 * 1024 * 1024);
		const wide = Object.fromEntries(
			Array.from({ length: 100_000 }, (_, i) => [`f${i}`, ['y'.repeat(100)]]),
		);
		const bodies: unknown[] = [
			big,
			JSON.stringify({ message: big }),
			{ message: big, error_message: big, errors: { amount: [big] } },
			JSON.stringify({ errors: wide }),
			{ errors: Array.from({ length: 1_000_000 }, () => 'no key') },
			`${big}api:error.bill_not_found`,
		];
		for (const body of bodies) {
			const started = performance.now();
			const described = describeApiError(400, body);
			expect(performance.now() - started).toBeLessThan(2000);
			expect(described.message.length).toBeLessThan(3000);
			expect(described.description.length).toBeLessThan(30_000);
			expect(Object.keys(described.fieldErrors ?? {}).length).toBeLessThanOrEqual(20);
		}
	});
});
