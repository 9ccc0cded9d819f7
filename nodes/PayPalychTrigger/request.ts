import {
	EVENT_HEADER,
	RECEIVED_AT_HEADER,
	describeRejection,
	isMoneyBackEvent,
	parsePostbackBody,
	type ParseResult,
	type PostbackFields,
} from '../shared';
import { ignored, pass, refused, stop, type Call, type Verdict } from './answer';

/**
 * Reading a call: whether the relay forwarded it for this node, its body's fields (from the raw
 * body n8n keeps, or what n8n parsed) and when the relay received it. The first room a call
 * enters; what it hands on is plain fields.
 */

/** Bodies above this size are refused (400) before anything is parsed or verified. */
export const MAX_BODY_BYTES = 64 * 1024;

export type ReadBodyResult = ParseResult | { ok: false; reason: 'too_large' };

/**
 * Turns the received body into postback fields. The raw bytes are preferred (n8n keeps them as
 * `rawBody`); an already parsed body is the fallback. Values are never re-formatted.
 */
export function readPostbackBody(
	raw: Buffer | undefined,
	parsedBody: unknown,
	contentType: string,
): ReadBodyResult {
	if (raw !== undefined) {
		if (raw.length > MAX_BODY_BYTES) return { ok: false, reason: 'too_large' };
		return parsePostbackBody(raw, contentType);
	}
	if (typeof parsedBody === 'string' && Buffer.byteLength(parsedBody, 'utf8') > MAX_BODY_BYTES) {
		return { ok: false, reason: 'too_large' };
	}
	if (typeof parsedBody === 'object' && parsedBody !== null) {
		let size = 0;
		try {
			size = Buffer.byteLength(JSON.stringify(parsedBody), 'utf8');
		} catch {
			return { ok: false, reason: 'not_an_object' };
		}
		if (size > MAX_BODY_BYTES) return { ok: false, reason: 'too_large' };
	}
	return parsePostbackBody(parsedBody, contentType);
}

/** The parts of n8n's request the trigger reads: headers and the raw body its body reader keeps. */
export interface N8nRequest {
	headers: Record<string, string | string[] | undefined>;
	rawBody?: unknown;
	readRawBody?: () => Promise<void>;
	readableEnded?: boolean;
}

/** A call the relay forwarded for another event is not this node's. */
function forwardedElsewhere(call: Call, req: N8nRequest): Verdict<void> {
	const forwardedAs = req.headers[EVENT_HEADER];
	// A refund or chargeback forwarded to this URL is decided by its body and signature.
	if (isMoneyBackEvent(typeof forwardedAs === 'string' && forwardedAs.trim().toLowerCase())) {
		return pass(undefined);
	}
	if (typeof forwardedAs === 'string' && forwardedAs.trim().toLowerCase() !== call.event) {
		return stop(
			ignored(
				`PayPalych Trigger (${call.event}) ignored a call forwarded as ${forwardedAs.slice(0, 20)}`,
			),
		);
	}
	return pass(undefined);
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

/** The postback's fields, from the raw body or from what n8n parsed. */
export async function readBody(
	call: Pick<Call, 'context'> & { event: string },
	req: N8nRequest,
): Promise<Verdict<PostbackFields>> {
	const contentType = String(req.headers['content-type'] ?? '');
	let raw: Buffer | undefined;
	try {
		raw = await rawBodyOf(req, contentType);
	} catch {
		return stop(refused(call, 400, 'The body could not be read'));
	}
	const parsed = readPostbackBody(
		raw,
		raw === undefined ? call.context.getBodyData() : undefined,
		contentType,
	);
	if (!parsed.ok) {
		const why =
			parsed.reason === 'too_large'
				? `The body is larger than ${MAX_BODY_BYTES} bytes`
				: describeRejection(parsed);
		return stop(refused(call, 400, why));
	}
	return pass(parsed.fields);
}

/** A call as read: its fields and, when the relay forwarded it, when the relay received it (ms). */
export interface ReadCall {
	fields: PostbackFields;
	receivedAt: number | undefined;
}

/** Forwarded for this node, then the body: the fields, or the answer that stops the call. */
export async function readCall(call: Call, req: N8nRequest): Promise<Verdict<ReadCall>> {
	const forwarded = forwardedElsewhere(call, req);
	if (!forwarded.ok) return forwarded;
	const body = await readBody(call, req);
	if (!body.ok) return body;
	const receivedAt = Number(req.headers[RECEIVED_AT_HEADER]);
	return pass({
		fields: body.value,
		receivedAt: Number.isFinite(receivedAt) && receivedAt > 0 ? receivedAt : undefined,
	});
}
