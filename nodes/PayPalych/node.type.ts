/** Every resource of the node with its operations: the router's table must have exactly these. */
export type PayPalychMap = {
	balance: 'get';
	bill: 'create' | 'get' | 'getPayments' | 'search' | 'setActive';
	payment: 'get' | 'search';
	payout: 'createPersonal' | 'createRegular' | 'get' | 'search';
	refund: 'create' | 'get' | 'search';
	sbpBank: 'getMany';
	statement: 'get';
};
