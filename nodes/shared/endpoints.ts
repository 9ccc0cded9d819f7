/** The service's endpoints, relative to the base URL. */
export const API_PREFIX = '/api/v1';

/** One endpoint of the service: its HTTP method and its path. */
export interface Endpoint {
	readonly method: 'GET' | 'POST';
	readonly path: string;
}

export const ENDPOINTS = {
	billCreate: { method: 'POST', path: '/api/v1/bill/create' },
	billToggleActivity: { method: 'POST', path: '/api/v1/bill/toggle_activity' },
	billPayments: { method: 'GET', path: '/api/v1/bill/payments' },
	billStatus: { method: 'GET', path: '/api/v1/bill/status' },
	billSearch: { method: 'GET', path: '/api/v1/bill/search' },
	paymentStatus: { method: 'GET', path: '/api/v1/payment/status' },
	merchantBalance: { method: 'GET', path: '/api/v1/merchant/balance' },
	payoutPersonalCreate: { method: 'POST', path: '/api/v1/payout/personal/create' },
	payoutRegularCreate: { method: 'POST', path: '/api/v1/payout/regular/create' },
	payoutStatus: { method: 'GET', path: '/api/v1/payout/status' },
	payoutSearch: { method: 'GET', path: '/api/v1/payout/search' },
	sbpBanks: { method: 'GET', path: '/api/v1/payout/dictionaries/sbp_banks' },
	// Beyond the interface document: listed by the service's current reference
	// (docs/developer/service.md).
	paymentSearch: { method: 'GET', path: '/api/v1/payment/search' },
	refundFullCreate: { method: 'POST', path: '/api/v1/refund/full/create' },
	refundPartialCreate: { method: 'POST', path: '/api/v1/refund/partial/create' },
	refundStatus: { method: 'GET', path: '/api/v1/refund/status' },
	refundSearch: { method: 'GET', path: '/api/v1/refund/search' },
} as const satisfies Record<string, Endpoint>;

export const DEFAULT_BASE_URL = 'https://pal24.pro';

/** The base URL without trailing slashes, and without an `/api/v1` suffix pasted by mistake. */
export function normalizeBaseUrl(baseUrl: unknown): string {
	const text =
		typeof baseUrl === 'string' && baseUrl.trim() !== '' ? baseUrl.trim() : DEFAULT_BASE_URL;
	return text.replace(/\/+$/, '').replace(/\/api\/v1$/i, '');
}
