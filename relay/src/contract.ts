/**
 * The relay's one door to the wire contract (`nodes/shared`, the module the n8n nodes compile):
 * every relay module imports the contract from here, never from another path. It is TypeScript
 * source, so `tsc -p relay/tsconfig.json` checks it on a fresh clone; `npm run build -w relay`
 * compiles it together with the relay into `relay/dist/` (see relay/README.md, *Build*).
 */
export {
	DELIVERY_ATTEMPT_HEADER,
	EVENT_HEADER,
	EVENT_ID_HEADER,
	IDEMPOTENCY_KEY_HEADER,
	PAYMENT_POSTBACK_STATUSES,
	SERVICE_TIME_ZONE,
	PAYOUT_POSTBACK_STATUSES,
	POSTBACK_EVENTS,
	POSTBACK_RULES,
	canonicalStatus,
	RECEIPT_HEADER,
	RECEIVED_AT_HEADER,
	ENDPOINTS,
	addDays,
	apiRootOf,
	createdDate,
	createdWithin,
	dateIn,
	describeApiError,
	listUrl,
	readPages,
	widenedDates,
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
} from '../../nodes/shared/index.ts';
export type { PostbackEvent, PostbackFields } from '../../nodes/shared/index.ts';
