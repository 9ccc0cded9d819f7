import {
	NodeConnectionTypes,
	NodeOperationError,
	type IDataObject,
	type IHookFunctions,
	type INodeType,
	type INodeTypeDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';
import {
	EVENT_HEADER,
	POSTBACK_RULES,
	RECEIPT_HEADER,
	RECEIVED_AT_HEADER,
	UNKNOWN_POSTBACK_RETRY_MS,
	canonicalStatus,
	describeRejection,
	enrichPostback,
	eventKeyOf,
	isPaidStatus,
	isPostbackEvent,
	postbackKey,
	separateUnverified,
	verifyPostback,
	type PostbackEvent,
} from '../shared';
import { confirmWithService } from './confirm';
import { PASTE_TARGET, properties, triggerPanel } from './description';
import {
	MAX_BODY_BYTES,
	SeenPostbacks,
	customerPage,
	readPostbackBody,
	safeRedirectUrl,
	statusSelected,
} from './receive';

/** The parts of n8n's request the trigger reads: headers and the raw body its body reader keeps. */
interface N8nRequest {
	headers: Record<string, string | string[] | undefined>;
	rawBody?: unknown;
	readRawBody?: () => Promise<void>;
	readableEnded?: boolean;
}

/** The Node.js response methods the trigger uses (n8n's express response has them all). */
interface PlainResponse {
	statusCode: number;
	setHeader(name: string, value: string): unknown;
	end(body?: string): unknown;
}

/**
 * What the trigger did with a call: the value of RECEIPT_HEADER on every answer it writes.
 * `retry` (with 503): the service could not confirm the postback now; the sender should try again.
 */
type Receipt = 'accepted' | 'duplicate' | 'ignored' | 'rejected' | 'retry';

/** What a 503 asks the sender to wait before trying a postback again that could not be confirmed. */
const RETRY_AFTER_SECONDS = 60;

/** Answers the caller directly; only Node.js response methods, so it works on any server. */
function answer(
	res: PlainResponse,
	status: number,
	body: string,
	receipt: Receipt,
	contentType = 'text/plain; charset=utf-8',
): void {
	res.statusCode = status;
	if (receipt === 'retry') res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
	res.setHeader('Content-Type', contentType);
	res.setHeader('Cache-Control', 'no-store');
	res.setHeader(RECEIPT_HEADER, receipt);
	res.end(body);
}

async function rawBodyOf(req: N8nRequest, contentType: string): Promise<Buffer | undefined> {
	if (
		!Buffer.isBuffer(req.rawBody) &&
		typeof req.readRawBody === 'function' &&
		!/multipart/i.test(contentType) &&
		req.readableEnded !== true
	) {
		// A body n8n left unread (a content type it does not parse): read it the way n8n does.
		// Multipart bodies are parsed by n8n itself and come through getBodyData().
		await req.readRawBody();
	}
	return Buffer.isBuffer(req.rawBody) ? req.rawBody : undefined;
}

/** Redirect events answer the customer's browser: 303 to the merchant's page, or a plain page. */
function answerRedirect(
	context: IWebhookFunctions,
	event: Extract<PostbackEvent, 'success' | 'fail'>,
	fields: Record<string, string>,
	item: IDataObject,
	res: PlainResponse,
): IWebhookResponseData {
	const target = safeRedirectUrl(context.getNodeParameter('redirectUrl', ''));
	// A redirect is the customer's browser coming back; its signature is public. It proves no payment.
	item.customerSentTo = target ?? 'plain page';
	item.paymentProof = false;
	if (target) {
		res.statusCode = 303;
		res.setHeader('Location', target);
		res.setHeader('Cache-Control', 'no-store');
		res.setHeader(RECEIPT_HEADER, 'accepted');
		res.end();
	} else {
		answer(res, 200, customerPage(event, fields), 'accepted', 'text/html; charset=utf-8');
	}
	return { noWebhookResponse: true, workflowData: [[{ json: item }]] };
}

export class PayPalychTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'PayPalych Trigger',
		name: 'payPalychTrigger',
		icon: { light: 'file:../../icons/paypalych.svg', dark: 'file:../../icons/paypalych.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle:
			'={{ {"payment": "Payment postback", "payout": "Payout postback", "success": "Success redirect", "fail": "Fail redirect"}[$parameter["event"]] }}',
		description:
			'Starts the workflow when PayPalych reports a payment or a payout, or a customer returns after paying',
		defaults: { name: 'PayPalych Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'payPalychApi', required: true }],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: '={{$parameter["event"]}}',
			},
		],
		triggerPanel,
		properties,
	};

	webhookMethods = {
		default: {
			// The service has no API to register or remove notification URLs: the merchant pastes the
			// URL into the merchant account. These methods therefore succeed without calling out.
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return false;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				const event = this.getNodeParameter('event', 'payment') as string;
				const target = isPostbackEvent(event) ? PASTE_TARGET[event] : 'PayPalych merchant account';
				const url = this.getNodeWebhookUrl('default') ?? 'the URL shown in the node';
				this.logger.info(
					`PayPalych Trigger: the service cannot register URLs through its API, so nothing was registered. Paste ${url} as the ${target}.`,
				);
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				this.logger.info(
					'PayPalych Trigger: nothing to remove at PayPalych (URLs are set in the merchant account); clear the URL there if you no longer want the calls.',
				);
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const event = this.getNodeParameter('event', 'payment') as string;
		if (!isPostbackEvent(event)) {
			throw new NodeOperationError(this.getNode(), `Unknown event "${event}"`);
		}
		const req = this.getRequestObject() as unknown as N8nRequest;
		const res = this.getResponseObject() as unknown as PlainResponse;
		const workflowId = this.getWorkflow().id;

		// A reason names a field, a value or a rule, never the token or the received signature. Names
		// and values come from the caller: control characters are replaced and the length is capped.
		const printable = (why: string) =>
			Array.from(why.slice(0, 200), (c) =>
				c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127 ? '?' : c,
			).join('');
		const refuse = (status: number, why: string): IWebhookResponseData => {
			const reason = printable(why);
			this.logger.warn(`PayPalych Trigger refused a ${event} call (HTTP ${status}): ${reason}`, {
				workflowId,
			});
			answer(res, status, reason, 'rejected');
			return { noWebhookResponse: true };
		};

		const forwardedAs = req.headers[EVENT_HEADER];
		if (typeof forwardedAs === 'string' && forwardedAs.trim().toLowerCase() !== event) {
			this.logger.debug(
				`PayPalych Trigger (${event}) ignored a call forwarded as ${forwardedAs.slice(0, 20)}`,
				{ workflowId },
			);
			answer(res, 200, 'OK', 'ignored');
			return { noWebhookResponse: true };
		}

		const contentType = String(req.headers['content-type'] ?? '');
		let raw: Buffer | undefined;
		try {
			raw = await rawBodyOf(req, contentType);
		} catch {
			return refuse(400, 'The body could not be read');
		}
		const parsed = readPostbackBody(
			raw,
			raw === undefined ? this.getBodyData() : undefined,
			contentType,
		);
		if (!parsed.ok) {
			return refuse(
				400,
				parsed.reason === 'too_large'
					? `The body is larger than ${MAX_BODY_BYTES} bytes`
					: describeRejection(parsed),
			);
		}
		const fields = parsed.fields;

		const credentials = await this.getCredentials('payPalychApi');
		const token = typeof credentials.apiToken === 'string' ? credentials.apiToken : '';
		const tokens = token.trim() === token ? [token] : [token, token.trim()];
		const verified = verifyPostback(event, fields, tokens);
		if (!verified.ok) {
			if (verified.reason === 'no_token') {
				return refuse(
					500,
					'The trigger has no API token to verify calls: set it in the PayPalych credential',
				);
			}
			return refuse(401, describeRejection(verified));
		}

		const item = {
			...enrichPostback(event, fields),
			receivedAt: new Date().toISOString(),
		} as IDataObject;

		if (event === 'success' || event === 'fail') {
			return answerRedirect(this, event, fields, item, res);
		}
		separateUnverified(event, fields, item);

		const selected = this.getNodeParameter(
			event === 'payment' ? 'paymentStatuses' : 'payoutStatuses',
			[],
		) as string[];
		if (!statusSelected(fields.Status, selected, POSTBACK_RULES[event].statuses)) {
			this.logger.debug(
				`PayPalych Trigger: ${event} postback with status ${fields.Status} is not selected`,
				{ workflowId },
			);
			answer(res, 200, 'OK', 'ignored');
			return { noWebhookResponse: true };
		}

		const key = postbackKey(event, fields) as string;
		const seen = new SeenPostbacks(
			this.getWorkflowStaticData('node'),
			`${workflowId ?? ''}:${this.getNode().name}`,
		);
		const duplicate = (which: string): IWebhookResponseData => {
			this.logger.info(`PayPalych Trigger: ${event} postback ${which} was already received`, {
				workflowId,
			});
			answer(res, 200, 'OK', 'duplicate');
			return { noWebhookResponse: true };
		};
		const label = `${fields.TrsId ?? ''} ${canonicalStatus(fields.Status)}`;
		if (!(this.getNodeParameter('confirmWithApi', true) as boolean)) {
			if (seen.has(key)) return duplicate(label);
			seen.remember(key);
			item.confirmed = false;
			answer(res, 200, 'OK', 'accepted');
			return { noWebhookResponse: true, workflowData: [[{ json: item }]] };
		}

		// Claimed while the service is asked; remembered only once confirmed, so that a refused call
		// leaves nothing behind. An overlapping delivery of the same postback is asked to come back:
		// whether it is a duplicate is known only when the first one is confirmed.
		if (seen.has(key)) return duplicate(label);
		if (!seen.claim(key)) {
			answer(res, 503, 'The same postback is being confirmed right now. Try again later.', 'retry');
			return { noWebhookResponse: true };
		}
		let verdict: Awaited<ReturnType<typeof confirmWithService>>;
		try {
			const requireOrderId = this.getNodeParameter('orderCheck', 'orderId') !== 'billId';
			verdict = await confirmWithService(this, event, fields, requireOrderId);
			if (verdict.ok) seen.remember(key);
		} finally {
			seen.release(key);
		}
		if (!verdict.ok) {
			const reason = printable(`Not confirmed by the service: ${verdict.reason}`);
			const receivedAt = Number(req.headers[RECEIVED_AT_HEADER]);
			const waited = Number.isFinite(receivedAt) && receivedAt > 0 ? Date.now() - receivedAt : 0;
			if (verdict.retry && verdict.unknown && waited >= UNKNOWN_POSTBACK_RETRY_MS) {
				// Bounded: the relay stops retrying on 422 (dead letter, kept in its console).
				return refuse(
					422,
					`${reason}; still unknown ${Math.floor(waited / 60_000)} minutes after the relay received it`,
				);
			}
			if (verdict.retry) {
				this.logger.warn(
					`PayPalych Trigger asked for a retry of a ${event} postback (HTTP 503): ${reason}`,
					{ workflowId },
				);
				answer(res, 503, `${reason}. Try again later.`, 'retry');
				return { noWebhookResponse: true };
			}
			return refuse(422, reason);
		}
		const record = verdict.record;
		// The service's own id and status: a replay whose TrsId is spelled another way but names the
		// same record is a duplicate too.
		const recordKey = JSON.stringify([
			event,
			'record',
			String(record.id),
			canonicalStatus(record.status),
		]);
		if (seen.has(recordKey)) return duplicate(label);
		seen.remember(recordKey);
		item.confirmed = true;
		item.status = canonicalStatus(record.status);
		item.eventKey = eventKeyOf(event, String(record.id), String(record.status));
		if (event === 'payment') {
			item.paid = isPaidStatus(record.status);
			item.orderConfirmed = verdict.orderConfirmed === true;
			item.payment = record;
		} else {
			item.payout = record;
		}

		// Answered here, before n8n starts the execution: n8n saves the static data (the memory above)
		// when the node answers, whereas its own deferred "onReceived" answer comes after the run has
		// taken over the static data, and the new key could then be lost (seen with n8n 2.41.1).
		answer(res, 200, 'OK', 'accepted');
		return { noWebhookResponse: true, workflowData: [[{ json: item }]] };
	}
}
