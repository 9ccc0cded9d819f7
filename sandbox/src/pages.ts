/** The pages a person sees: the payment page, the QR page and the redirect to the shop. */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { pay, payRefusal } from './billing.ts';
import type { ContextOptions, SandboxContext } from './context.ts';
import { format2 } from './money.ts';
import { SandboxError, type Bill, type Fields, type PaymentMethod } from './model.ts';

export function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
	return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;padding:2rem;color:#1d2330}
main{max-width:28rem;margin:auto;background:#fff;border-radius:12px;padding:1.5rem 2rem;box-shadow:0 2px 10px #0001}
h1{font-size:1.3rem}.amount{font-size:2rem;font-weight:600}.muted{color:#667}.banner{background:#fff4d6;padding:.4rem .8rem;border-radius:6px;font-size:.85rem}
fieldset{border:1px solid #dde;border-radius:8px;margin:1rem 0}button{display:block;width:100%;margin:.4rem 0;padding:.7rem;border:0;border-radius:8px;font-size:1rem;cursor:pointer;background:#2f6fed;color:#fff}
button.alt{background:#e8ecf5;color:#1d2330}
</style></head><body><main><p class="banner">PayPalych sandbox: no real money moves.</p>${body}</main></body></html>`;
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
	return reply.code(status).type('text/html; charset=utf-8').send(html);
}

/** An auto-submitting POST form to the shop's Success or Fail URL. */
export function redirectPage(url: string, fields: Fields, heading: string): string {
	const inputs = Object.entries(fields)
		.map(
			([name, value]) =>
				`<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`,
		)
		.join('\n');
	return page(
		heading,
		`<h1>${escapeHtml(heading)}</h1><p class="muted">Returning you to the shop…</p>
<form id="redirect" method="post" action="${escapeHtml(url)}">
${inputs}
<noscript><button type="submit">Return to the shop</button></noscript>
</form>
<script>document.getElementById('redirect').submit();</script>`,
	);
}

const payForm = z.object({
	outcome: z.enum(['full', 'under', 'over', 'fail']),
	method: z.enum(['BANK_CARD', 'SBP']).optional(),
});

/** A decorative code for the QR page (the sandbox does not encode a scannable QR code). */
function pseudoQr(text: string): string {
	const size = 21;
	let bits = '';
	let seed = text;
	while (bits.length < size * size) {
		seed = createHash('sha256').update(seed).digest('hex');
		for (const char of seed) bits += parseInt(char, 16).toString(2).padStart(4, '0');
	}
	const cells: string[] = [];
	for (let y = 0; y < size; y += 1) {
		for (let x = 0; x < size; x += 1) {
			const finder = (x < 7 || x >= size - 7) && y < 7 ? true : x < 7 && y >= size - 7;
			const on = finder
				? (() => {
						const fx = x < 7 ? x : x - (size - 7);
						const fy = y < 7 ? y : y - (size - 7);
						return (
							fx === 0 ||
							fx === 6 ||
							fy === 0 ||
							fy === 6 ||
							(fx >= 2 && fx <= 4 && fy >= 2 && fy <= 4)
						);
					})()
				: bits[y * size + x] === '1';
			if (on) cells.push(`<rect x="${x}" y="${y}" width="1" height="1"/>`);
		}
	}
	return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="-2 -2 ${size + 4} ${size + 4}" width="220" height="220" role="img" aria-label="QR code"><rect x="-2" y="-2" width="${size + 4}" height="${size + 4}" fill="#fff"/><g fill="#000">${cells.join('')}</g></svg>`;
}

function billSummary(bill: Bill): string {
	return `<h1>${escapeHtml(bill.name ?? 'Payment')}</h1>
${bill.description ? `<p>${escapeHtml(bill.description)}</p>` : ''}
<p class="amount">${format2(bill.amount)} ${bill.currency}</p>
${bill.payerPaysCommission ? '<p class="muted">The payment commission is added to the amount.</p>' : ''}
<p class="muted">Bill ${escapeHtml(bill.id)}${bill.orderId ? `, order ${escapeHtml(bill.orderId)}` : ''} · ${bill.type}</p>`;
}

/** The pages: the home page, the QR page and the payment page (showing a bill, paying it). */
export async function pageRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	infoPages(app, ctx);
	payPage(app, ctx);
	payAction(app, ctx);
}

const findBill = (ctx: SandboxContext, request: FastifyRequest): Bill | undefined =>
	ctx.state.bills.get((request.params as { id: string }).id);

const missing = (reply: FastifyReply) =>
	sendHtml(
		reply,
		404,
		page('Bill not found', '<h1>Bill not found</h1><p>This payment link does not exist.</p>'),
	);

/** The home page and a bill's QR page. */
function infoPages(app: FastifyInstance, ctx: SandboxContext): void {
	app.get('/', async (request, reply) => {
		const base = ctx.baseUrl(request);
		return sendHtml(
			reply,
			200,
			page(
				'PayPalych sandbox',
				`<h1>PayPalych sandbox</h1><p>API: <code>${escapeHtml(base)}/api/v1</code></p><p>Control API: <code>${escapeHtml(base)}/_sandbox</code> (see sandbox/README.md).</p>`,
			),
		);
	});

	app.get('/link/:id', async (request, reply) => {
		const bill = findBill(ctx, request);
		if (!bill) return missing(reply);
		const payUrl = `${ctx.baseUrl(request)}/pay/${bill.id}`;
		return sendHtml(
			reply,
			200,
			page(
				'Pay by QR code',
				`${billSummary(bill)}<p>${pseudoQr(payUrl)}</p><p class="muted">The sandbox draws a stand-in code; open the payment page instead:</p><p><a href="${escapeHtml(payUrl)}">${escapeHtml(payUrl)}</a></p>`,
			),
		);
	});
}

/** The payment page of a bill: its summary, the methods and the outcomes to choose from. */
function payPage(app: FastifyInstance, ctx: SandboxContext): void {
	app.get('/pay/:id', async (request, reply) => {
		const bill = findBill(ctx, request);
		if (!bill) return missing(reply);
		const refusal = payRefusal(ctx.state, bill);
		if (refusal) {
			return sendHtml(
				reply,
				409,
				page(
					'Payment unavailable',
					`${billSummary(bill)}<p><strong>${escapeHtml(refusal.message)}.</strong></p>`,
				),
			);
		}
		const methods: PaymentMethod[] = bill.paymentMethod
			? [bill.paymentMethod]
			: ['BANK_CARD', 'SBP'];
		const methodInputs = methods
			.map(
				(method, index) =>
					`<label><input type="radio" name="method" value="${method}"${index === 0 ? ' checked' : ''}> ${method === 'BANK_CARD' ? 'Bank card' : 'SBP (Faster Payments)'}</label><br>`,
			)
			.join('\n');
		return sendHtml(
			reply,
			200,
			page(
				'Pay a bill',
				`${billSummary(bill)}
<form method="post" action="/pay/${escapeHtml(bill.id)}">
<fieldset><legend>Payment method</legend>${methodInputs}</fieldset>
<fieldset><legend>Outcome (sandbox)</legend>
<button type="submit" name="outcome" value="full">Pay in full</button>
<button type="submit" name="outcome" value="under" class="alt">Pay less (underpaid)</button>
<button type="submit" name="outcome" value="over" class="alt">Pay more (overpaid)</button>
<button type="submit" name="outcome" value="fail" class="alt">Decline the payment (fail)</button>
</fieldset></form>`,
			),
		);
	});
}

/** Paying a bill from its page: the payment, then the redirect to the shop (or a result page). */
function payAction(app: FastifyInstance, ctx: SandboxContext): void {
	app.post('/pay/:id', async (request, reply) => {
		const bill = findBill(ctx, request);
		if (!bill) return missing(reply);
		const form = payForm.safeParse(request.body ?? {});
		if (!form.success)
			return sendHtml(
				reply,
				400,
				page('Bad request', '<h1>Bad request</h1><p>Choose an outcome and a payment method.</p>'),
			);
		if (bill.paymentMethod && form.data.method && form.data.method !== bill.paymentMethod) {
			return sendHtml(
				reply,
				400,
				page(
					'Bad request',
					`<h1>Bad request</h1><p>This bill is paid by ${bill.paymentMethod} only.</p>`,
				),
			);
		}
		let result;
		try {
			result = pay(ctx.state, bill, form.data);
		} catch (error) {
			if (error instanceof SandboxError) {
				return sendHtml(
					reply,
					error.status,
					page(
						'Payment unavailable',
						`${billSummary(bill)}<p><strong>${escapeHtml(error.message)}.</strong></p>`,
					),
				);
			}
			throw error;
		}
		const { payment, redirect } = result;
		const heading =
			payment.status === 'FAIL' ? 'Payment failed' : `Payment ${payment.status.toLowerCase()}`;
		if (redirect.url)
			return sendHtml(reply, 200, redirectPage(redirect.url, redirect.fields, heading));
		return sendHtml(
			reply,
			200,
			page(
				heading,
				`<h1>${escapeHtml(heading)}</h1><p>Status: <strong>${payment.status}</strong></p><p>Paid: ${format2(payment.amount)} ${payment.currency}</p><p class="muted">Payment ${escapeHtml(payment.id)}. The shop has no ${payment.status === 'SUCCESS' || payment.status === 'OVERPAID' ? 'Success' : 'Fail'} URL, so you stay here.</p>`,
			),
		);
	});
}
