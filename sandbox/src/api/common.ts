import type { FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context.ts';
import { keyError, unauthenticated, type Endpoint } from '../errors.ts';
import { parseAmount } from '../money.ts';
import type { Merchant } from '../model.ts';
import { toInput, type Input } from '../validate.ts';

/**
 * Authentication and merchant checks, in this order: token → IP allow-list → merchant exists → banned →
 * subscription (where the endpoint checks it) → verified (payout creation).
 */
export function merchantFor(
	ctx: SandboxContext,
	request: FastifyRequest,
	endpoint: Endpoint,
	checks: { subscription?: boolean; verified?: boolean } = {},
): Merchant {
	const merchant = bearerMerchant(ctx, request);
	if (!merchant) throw unauthenticated();
	if (merchant.ipAllowList !== null && !merchant.ipAllowList.includes(clientIp(request)))
		throw keyError(endpoint, 'ip_access_denied');
	if (!merchant.exists) throw keyError(endpoint, 'merchant_not_found');
	if (merchant.banned) throw keyError(endpoint, 'merchant_banned');
	if (checks.subscription) {
		if (merchant.subscription === 'none')
			throw keyError(endpoint, 'merchant_subscription_not_found');
		if (merchant.subscription === 'inactive')
			throw keyError(endpoint, 'merchant_subscription_inactive');
	}
	if (checks.verified && !merchant.verified) throw keyError(endpoint, 'merchant_not_verified');
	return merchant;
}

/** The merchant whose token the request's `Authorization: Bearer` header carries. */
export function bearerMerchant(ctx: SandboxContext, request: FastifyRequest): Merchant | undefined {
	const header = request.headers.authorization;
	const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header.trim()) : null;
	return match?.[1] ? ctx.state.merchantByToken(match[1]) : undefined;
}

/** The caller's address, an IPv4-mapped IPv6 one written as IPv4. */
function clientIp(request: FastifyRequest): string {
	return request.ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
}

/** POST input: query fields merged under the body fields (as Laravel's input does). */
export function postInput(request: FastifyRequest): Input {
	const body = toInput(request.body);
	return { ...toInput(request.query), ...body };
}

export function getInput(request: FastifyRequest): Input {
	return toInput(request.query);
}

/** Positive cents within decimal(10,2), or the endpoint's invalid_amount error. */
export function amountOrFail(endpoint: Endpoint, text: string): number {
	const parsed = parseAmount(text);
	if (!parsed.ok) throw keyError(endpoint, 'invalid_amount');
	return parsed.cents;
}
