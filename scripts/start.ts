/**
 * `npm start`: the whole product on this machine, no account needed.
 *
 * Starts the sandbox (standing in for PayPalych), the relay (SQLite store) and a real n8n with
 * this package installed as a community package; creates the n8n owner, the PayPalych
 * credential, a sandbox merchant whose shop posts to the relay, and publishes the example
 * workflows with the relay pointed at them. Prints where everything is and the payment page of a
 * fresh bill; Ctrl-C stops it all. State lives in .n8n-demo/ (the n8n owner and workflows persist).
 */
import { join } from 'node:path';
import { EXAMPLE_IDS } from './harness/examples.ts';
import { REPO_ROOT } from './harness/n8n-install.ts';
import { Phases } from './harness/proc.ts';
import { startSink, type SinkRequest } from './harness/sink.ts';
import { startStack, type Stack } from './harness/stack.ts';

const STATE_DIR = process.env.PAYPALYCH_DEMO_DIR ?? join(REPO_ROOT, '.n8n-demo');
const OWNER = {
	email: process.env.PAYPALYCH_DEMO_EMAIL ?? 'owner@example.com',
	password: process.env.PAYPALYCH_DEMO_PASSWORD ?? 'PayPalych-demo-1',
	firstName: 'Demo',
	lastName: 'Merchant',
};
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

const out = (line: string) => process.stdout.write(line + '\n');
const phases = new Phases('start', out);
let stack: Stack | undefined;
let backend: Awaited<ReturnType<typeof startSink>> | undefined;
let stopping = false;

async function shutdown(signal: string): Promise<void> {
	if (stopping) {
		out('Stopping already; press Ctrl-C again... the processes are being killed.');
		process.exit(130);
	}
	stopping = true;
	out(`\n${signal}: stopping n8n, the relay and the sandbox...`);
	await stack?.stop();
	await backend?.close();
	out('Stopped.');
	process.exit(0);
}
process.on('SIGINT', () => void shutdown('Ctrl-C'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

function describeCall(request: SinkRequest): string {
	const body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
	const status = typeof request.answer.status === 'string' ? request.answer.status : undefined;
	const marked = status ? `   => order ${String(request.answer.orderId)} is now ${status}` : '';
	const held =
		request.answer.held === true
			? `   => order ${String(request.answer.orderId)}: seller's payouts on hold`
			: '';
	return `shop backend <- ${request.method} ${request.path} ${body}${marked}${held}`;
}

try {
	backend = await startSink({
		port: port('PAYPALYCH_DEMO_BACKEND_PORT', 0),
		onRequest: (r) => out(describeCall(r)),
	});
	stack = await startStack({
		stateDir: STATE_DIR,
		ports: {
			sandbox: port('PAYPALYCH_DEMO_SANDBOX_PORT', 8787),
			relay: port('PAYPALYCH_DEMO_RELAY_PORT', 8788),
			n8n: port('PAYPALYCH_DEMO_N8N_PORT', 5678),
		},
		merchantToken: 'demo|paypalych-sandbox-merchant-token',
		shopBackend: backend.url,
		owner: OWNER,
		relayMoneyBack: true,
		phases,
		print: out,
	});
	const { n8n, sandbox, relay } = stack;

	// Refunds and chargebacks go through the relay too (its RELAY_REFUND_TARGETS and
	// RELAY_CHARGEBACK_TARGETS are examples 07 and 08): the shop's Refund URL and Chargeback URL
	// name its routes, as a merchant pastes them.
	await stack.control('PATCH', `/shops/${sandbox.shopId}`, {
		refundUrl: `${relay.url}/postback/refund`,
		chargebackUrl: `${relay.url}/postback/chargeback`,
	});

	// A fresh bill, created by the "payment link on request" workflow inside n8n.
	const linkUrl = `${n8n.url}/webhook/paypalych/payment-link`;
	const orderId = `demo-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
	const res = await fetch(linkUrl, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ amount: '1500.00', orderId, description: 'Demo order' }),
	});
	const link = (await res.json()) as { paymentPage?: string; billId?: string };
	if (!res.ok || !link.paymentPage)
		throw new Error(
			`the payment link workflow answered HTTP ${res.status}: ${JSON.stringify(link)}`,
		);
	phases.mark('fresh bill created through n8n');
	phases.total();

	out('');
	out('PayPalych demo is running (Ctrl-C stops everything)');
	out(`  n8n editor      ${n8n.url}   login ${OWNER.email} / ${OWNER.password}`);
	out(
		`  relay           ${relay.url}   (postbacks: /postback/payment, /postback/payout, /postback/refund, /postback/chargeback; health: /healthz)`,
	);
	out(`  relay console   ${relay.url}/admin/login   admin token ${relay.adminToken}`);
	out(
		`  sandbox         ${sandbox.url}   merchant ${sandbox.merchantId}, API token ${sandbox.token}`,
	);
	out(
		`  shop backend    ${backend.url}   (a stand-in: every call the workflows make is printed below)`,
	);
	out('');
	out(`  Pay this bill:  ${link.paymentPage}   (order ${orderId}, 1500.00 RUB)`);
	out(
		`  New bill:       curl -s -X POST ${linkUrl} -H 'content-type: application/json' -d '{"amount":"250.00","orderId":"order-1"}'`,
	);
	out(
		`  Refund it:      curl -s -X POST ${sandbox.url}/_sandbox/payments/PAYMENT_ID/refund -H 'content-type: application/json' -d '{}'`,
	);
	out(
		'                   (PAYMENT_ID: the paymentId the shop backend receives below; add "amount" for a part) -> example 07 marks the order refunded',
	);
	out(
		`  Charge it back: curl -s -X POST ${sandbox.url}/_sandbox/payments/PAYMENT_ID/chargeback -H 'content-type: application/json' -d '{}'   -> example 08 alerts and holds the seller's payouts`,
	);
	out(
		`  Payout request:  curl -s -X POST ${n8n.url}/webhook/paypalych/payout-request -H 'content-type: application/json' -d '{"requestId":"wd-1001","amount":"1500.00","cardNumber":"4111111111111111","cardHolder":"IVAN PETROV"}'`,
	);
	out(
		'                   then open the approvalUrl the shop backend receives below and Approve or Reject (example 06)',
	);
	out('');
	out('  Published workflows:');
	for (const w of stack.workflows) out(`    ${w.name}   ${n8n.url}/workflow/${w.id}`);
	out(`  Run the payout sweep or the reconciliation from the editor (button "Execute workflow"),`);
	out(
		`  or: curl -s ${sandbox.url}/_sandbox/merchants/${sandbox.merchantId}   (the merchant's balances and payouts)`,
	);
	out(`  Logs: ${join(STATE_DIR, 'logs')}   Payment workflow id: ${EXAMPLE_IDS.paymentPaid}`);
	out('');
	// Stay up until a signal arrives.
	setInterval(() => undefined, 1 << 30);
} catch (error) {
	out(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
	await stack?.stop();
	await backend?.close();
	process.exit(1);
}
