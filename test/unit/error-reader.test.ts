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
