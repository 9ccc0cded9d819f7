// The relay benchmark's load: autocannon (in this process) posting signed PayPalych postbacks to
// /postback/payment, each with a new TrsId. See relay.bench.ts.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { TOKEN } from './servers.ts';

interface Histogram {
	average: number;
	p50: number;
	p99: number;
	max: number;
}
export interface AutocannonResult {
	/** total: completed requests. */
	requests: Histogram & { total: number };
	latency: Histogram;
	'2xx': number;
	non2xx: number;
	errors: number;
	timeouts: number;
}
interface AutocannonRequest {
	method: string;
	path: string;
	headers: Record<string, string>;
	body?: string;
	setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
type Autocannon = (opts: {
	/** Several URLs: the connections are spread over them round-robin. */
	url: string | string[];
	connections: number;
	duration: number;
	/** Requests per second over all connections (a fixed rate instead of as fast as it answers). */
	overallRate?: number;
	requests: AutocannonRequest[];
}) => Promise<AutocannonResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();

export function signedBody(trsId: string): string {
	const invId = `order-${trsId}`;
	return new URLSearchParams({
		InvId: invId,
		OutSum: '100.00',
		Commission: '3.00',
		CurrencyIn: 'RUB',
		TrsId: trsId,
		Status: 'SUCCESS',
		SignatureValue: md5(`100.00:${invId}:${TOKEN}`),
	}).toString();
}

/**
 * Every request carries a new signed postback (a new TrsId), for the bare route too: the client's
 * work per request (signing in this process, on the same two cores) is then the same in every run,
 * and only the servers differ. (A fixed body for the bare route made its client cheaper.)
 */
export function load(
	url: string | string[],
	options: { connections: number; duration: number; rate?: number },
): Promise<AutocannonResult> {
	let n = 0;
	const run = `${process.pid}-${Date.now()}`;
	const request: AutocannonRequest = {
		method: 'POST',
		path: '/postback/payment',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: signedBody(`B-${run}-0`),
		setupRequest: (req) => ({ ...req, body: signedBody(`B-${run}-${n++}`) }),
	};
	return autocannon({
		url,
		connections: options.connections,
		duration: options.duration,
		...(options.rate ? { overallRate: options.rate } : {}),
		requests: [request],
	});
}
