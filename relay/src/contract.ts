/**
 * The relay's one door to the wire contract (`nodes/shared`, the same source the n8n nodes
 * compile): every relay module imports the contract from here, never from another path. The
 * import is of the TypeScript source, not of the community package's build, so
 * `tsc -p relay/tsconfig.json` checks it on a fresh clone, and `npm run build -w relay`
 * (`tsc -p relay/tsconfig.build.json`) compiles it together with the relay into `relay/dist/`
 * (`dist/nodes/shared/*.js`, CommonJS; see docs/developer/relay.md, *Build*).
 */
export {
	DELIVERY_ATTEMPT_HEADER,
	EVENT_HEADER,
	EVENT_ID_HEADER,
	IDEMPOTENCY_KEY_HEADER,
	PAYMENT_POSTBACK_STATUSES,
	SERVICE_TIME_ZONE,
	PAYOUT_POSTBACK_STATUSES,
	POSTBACK_RULES,
	canonicalStatus,
	RECEIPT_HEADER,
	RECEIPTS,
	receiptOf,
	RECEIVED_AT_HEADER,
	ENDPOINTS,
	addDays,
	apiRootOf,
	createdDate,
	createdWithin,
	dateIn,
	describeApiError,
	listUrl,
	pages,
	readPages,
	widenedDates,
	chooseBillPayment,
	confirmPayment,
	confirmPayout,
	describeRejection,
	expectedSignature,
	formatCents,
	orderIdOf,
	billOfUnnamedOrder,
	parsePostbackBody,
	postbackKey,
	toCents,
	verifyPostback,
	MONEY_BACK_EVENTS,
	confirmMoneyBack,
	findById,
	identifyMoneyBack,
	isMoneyBackEvent,
	isMoneyBackFinal,
	isTransientStatus,
	moneyBackKey,
	moneyBackKeyOf,
	moneyBackListOf,
	paymentIdOfMoneyBack,
	postbackKindOf,
	textOf,
	CALL_EVENTS,
	POSTBACK_EVENTS,
} from '../../nodes/shared/index.ts';
/**
 * The kinds of event the relay takes, stores, forwards and counts are the contract's: the four
 * calls of the interface document (`CallEvent`: payment, payout, success, fail) and money going
 * back (`MoneyBackEvent`: refund, chargeback), together `PostbackEvent`.
 */
export type {
	BillPaymentChoice,
	CallEvent,
	MoneyBackEvent,
	PostbackEvent,
	PostbackFields,
	Receipt,
} from '../../nodes/shared/index.ts';
