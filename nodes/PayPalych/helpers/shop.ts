import type { INode } from 'n8n-workflow';

import type { PayPalychContext } from '../transport';
import { CREDENTIAL_NAME } from '../transport';
import { inputError } from './validation';

function textOf(value: unknown): string {
	return typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
}

/** The credential's Shop ID (optional), trimmed; '' when none is set. */
export async function credentialShopId(this: PayPalychContext): Promise<string> {
	const credentials = await this.getCredentials(CREDENTIAL_NAME);
	return textOf(credentials.shopId);
}

/**
 * The Shop ID an operation sends: the node's own field when it is set, else the credential's;
 * '' when neither is (a search then sends no `shop_id`).
 */
export async function shopIdFor(this: PayPalychContext, nodeValue: unknown): Promise<string> {
	const own = textOf(nodeValue);
	return own !== '' ? own : await credentialShopId.call(this);
}

/** A Shop ID that must be known (Bill › Create): the node's or the credential's, or an error. */
export async function requiredShopId(
	this: PayPalychContext,
	node: INode,
	nodeValue: unknown,
	itemIndex: number,
): Promise<string> {
	const shopId = await shopIdFor.call(this, nodeValue);
	if (shopId === '') {
		throw inputError(
			node,
			'Shop ID',
			'is required: set it on the node or in the PayPalych credential',
			itemIndex,
			'Copy the shop ID from the shop settings of your merchant account',
		);
	}
	return shopId;
}
