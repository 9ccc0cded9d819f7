import {
	UNAUTHENTICATED_KEY,
	UNAUTHORIZED_KEY,
	VALIDATION_KEY,
} from '../../dist/nodes/shared/index.js';

/** Both payout-create operations list the same business errors, all with HTTP 400. */
const PAYOUT_CREATE_ERRORS: ReadonlyArray<readonly [number, string]> = [
	[401, UNAUTHENTICATED_KEY],
	[400, 'api:error.invalid_amount'],
	[400, 'api:error.merchant_banned'],
	[400, 'api:error.merchant_not_found'],
	[400, 'api:error.merchant_subscription_inactive'],
	[400, 'api:error.merchant_subscription_not_found'],
	[400, 'api:error.payout_account_not_found'],
	[400, 'api:error.payout_account_banned'],
	[400, 'api:error.daily_payout_limit_exceeded'],
	[400, 'api:error.monthly_payout_limit_exceeded'],
	[400, 'api:error.balance_not_enough'],
	[400, 'api:error.direction_not_available'],
	[400, 'api:error.merchant_not_verified'],
	[422, VALIDATION_KEY],
];

/**
 * The error keys each endpoint lists in the service's interface document, with the HTTP code the
 * document gives them (the same key has different codes on different endpoints). The nodes do not
 * read this table: they explain an error by its key alone (ERROR_CATALOGUE). The tests hold the
 * catalogue and the sandbox against it.
 */
export const ENDPOINT_ERRORS: Readonly<Record<string, ReadonlyArray<readonly [number, string]>>> = {
	'/api/v1/bill/create': [
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.invalid_amount'],
		[403, 'api:error.merchant_banned'],
		[403, 'api:error.merchant_not_found'],
		[403, 'api:error.merchant_subscription_inactive'],
		[403, 'api:error.merchant_subscription_not_found'],
		[403, 'api:error.shop_not_found'],
		[403, 'api:error.shop_not_enabled'],
		[403, 'api:error.access_denied'],
		[403, 'api:error.rate-not-found'],
		[422, VALIDATION_KEY],
		[500, 'api:error.general_error'],
	],
	'/api/v1/bill/toggle_activity': [
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.merchant_banned'],
		[422, 'api:error.bill_not_found'],
		[403, 'api:error.merchant_subscription_inactive'],
		[403, 'api:error.merchant_subscription_not_found'],
		[403, 'api:error.merchant_not_found'],
		[403, 'api:error.bill_is_finished'],
		[422, VALIDATION_KEY],
		[500, 'api:error.general_error'],
	],
	'/api/v1/bill/payments': [
		[400, 'api:error.too_many_payments'],
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.merchant_not_found'],
		[403, 'api:error.merchant_banned'],
		[403, 'api:error.bill_not_found'],
	],
	'/api/v1/bill/status': [
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.merchant_banned'],
		[422, 'api:error.bill_not_found'],
	],
	'/api/v1/bill/search': [[401, UNAUTHENTICATED_KEY]],
	'/api/v1/payment/status': [
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.merchant_banned'],
		[422, 'api:error.payment_not_found'],
	],
	'/api/v1/merchant/balance': [
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.merchant_banned'],
		[422, 'api:error.bill_not_found'],
		[403, 'api:error.merchant_subscription_inactive'],
		[403, 'api:error.merchant_subscription_not_found'],
		[403, 'api:error.merchant_not_found'],
		[422, VALIDATION_KEY],
	],
	'/api/v1/payout/personal/create': [...PAYOUT_CREATE_ERRORS, [500, 'api:error.general_error']],
	'/api/v1/payout/regular/create': [
		...PAYOUT_CREATE_ERRORS,
		[403, UNAUTHORIZED_KEY],
		[500, 'api:error.general_error'],
	],
	'/api/v1/payout/status': [
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.merchant_banned'],
		[403, 'api:error.merchant_subscription_inactive'],
		[403, 'api:error.merchant_subscription_not_found'],
		[403, 'api:error.merchant_not_found'],
		[422, 'api:error.payout_not_found'],
		[422, VALIDATION_KEY],
	],
	'/api/v1/payout/search': [[401, UNAUTHENTICATED_KEY]],
	'/api/v1/payout/dictionaries/sbp_banks': [
		[401, UNAUTHENTICATED_KEY],
		[403, 'api:error.merchant_banned'],
		[422, VALIDATION_KEY],
	],
};
