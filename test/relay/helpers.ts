import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getPort from 'get-port';
import { Intake } from '../../relay/src/intake.ts';
import type { IntakeOptions } from '../../relay/src/intake.ts';
import { Metrics } from '../../relay/src/metrics.ts';

export const TOKEN = '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT';
export const OLD_TOKEN = '71|oldTokenBeforeRotation0000000000000000';
export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

export const ROOT = join(__dirname, '..', '..');
/** The project's Node 24 (the `node` devDependency), else the one running the tests. */
export const NODE = existsSync(join(ROOT, 'node_modules/.bin/node'))
	? join(ROOT, 'node_modules/.bin/node')
	: process.execPath;
/** The compiled relay, as its package's bin runs it; built by `npm run build` (or `npm run build -w relay`). */
export const RELAY_BIN = join(ROOT, 'relay', 'dist', 'relay', 'src', 'bin.js');

// Independent oracle for the signature rule (not the module under test).
export const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();

export function paymentFields(
	trsId: string,
	opts: { status?: string; outSum?: string; invId?: string; token?: string } = {},
) {
	const outSum = opts.outSum ?? '18.50';
	const invId = opts.invId ?? `order-${trsId}`;
	return {
		InvId: invId,
		OutSum: outSum,
		Commission: '0.50',
		Currency: 'RUB',
		CurrencyIn: 'RUB',
		TrsId: trsId,
		Status: opts.status ?? 'SUCCESS',
		custom: 'c-1',
		SignatureValue: md5(`${outSum}:${invId}:${opts.token ?? TOKEN}`),
	};
}

export function payoutFields(
	trsId: string,
	opts: { status?: string; amount?: string; token?: string } = {},
) {
	const amount = opts.amount ?? '1000.00';
	return {
		TrsId: trsId,
		Amount: amount,
		IsAuto: 'false',
		Status: opts.status ?? 'SUCCESS',
		Currency: 'RUB',
		Commission: '10.00',
		AccountType: 'BANK_CARD',
		AccountNumber: '220000******0000',
		SignatureValue: md5(`${amount}:${trsId}:${opts.token ?? TOKEN}`),
	};
}

export function redirectFields(invId: string, opts: { outSum?: string; token?: string } = {}) {
	const outSum = opts.outSum ?? '18.50';
	return {
		InvId: invId,
		OutSum: outSum,
		CurrencyIn: 'RUB',
		custom: 'c-1',
		SignatureValue: md5(`${outSum}:${invId}:${opts.token ?? TOKEN}`),
	};
}

/**
 * An intake that looks payments up at `apiBaseUrl` (token `token`, no payout check, no forwarder)
 * and stores into `store`: payments are meant for a closed port, no other event has a target.
 */
export function lookUpIntake(
	store: IntakeOptions['store'],
	apiBaseUrl: string,
	opts: { pairMax: number; lookUpLimit?: IntakeOptions['config']['lookUpLimit'] },
): Intake {
	return new Intake({
		config: {
			pairLimit: { max: opts.pairMax, windowMs: 3_600_000 },
			payoutCheck: 'off',
			apiBaseUrl,
			apiTokens: ['token'],
			deliveryTimeoutMs: 1_000,
			...(opts.lookUpLimit ? { lookUpLimit: opts.lookUpLimit } : {}),
		},
		store,
		metrics: new Metrics(),
		targets: {
			payment: ['http://127.0.0.1:9/pay'],
			payout: [],
			success: [],
			fail: [],
			refund: [],
			chargeback: [],
		},
	});
}

export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

export function tempDir(): { dir: string; cleanup: () => void } {
	const dir = mkdtempSync(join(tmpdir(), 'relay-test-'));
	return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

let home: string | undefined;
/** An empty home folder of this test process's own, removed when the process ends. */
export function testHome(): string {
	if (home === undefined) {
		const made = mkdtempSync(join(tmpdir(), 'relay-test-home-'));
		process.once('exit', () => rmSync(made, { recursive: true, force: true }));
		home = made;
	}
	return home;
}

/**
 * The whole environment of a child process a test starts: PATH (to find node), HOME (the test's
 * own, never the account's: a child without HOME reads the password database's home folder, not
 * the $HOME the test runs with) and what the test sets, which may name another HOME. Nothing else
 * of the shell the tests run in (RELAY_*, XDG_*, LOG_LEVEL) reaches the child.
 */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
	return { PATH: process.env.PATH ?? '', HOME: testHome(), ...env };
}

export function baseEnv(
	dir: string,
	targets: {
		payment?: string[];
		payout?: string[];
		redirect?: string[];
		success?: string[];
		fail?: string[];
	},
	extra: Record<string, string> = {},
) {
	return {
		PORT: '0',
		HOST: '127.0.0.1',
		PAYPALYCH_API_TOKEN: `${OLD_TOKEN},${TOKEN}`,
		RELAY_PAYMENT_TARGETS: (targets.payment ?? []).join(','),
		RELAY_PAYOUT_TARGETS: (targets.payout ?? []).join(','),
		RELAY_REDIRECT_TARGETS: (targets.redirect ?? []).join(','),
		RELAY_SUCCESS_TARGETS: (targets.success ?? []).join(','),
		RELAY_FAIL_TARGETS: (targets.fail ?? []).join(','),
		RELAY_DATABASE: join(dir, 'relay.sqlite'),
		RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
		// The sandbox (the service's stand-in) listens on plain http.
		RELAY_ALLOW_PLAIN_HTTP_API: '1',
		// These tests sign payout postbacks themselves, with no service to look the TrsId up;
		// test/relay/attacks/ runs the payout check (the default) against the sandbox.
		RELAY_PAYOUT_CHECK: 'off',
		RELAY_BASE_DELAY_MS: '20',
		RELAY_MAX_DELAY_MS: '200',
		RELAY_DELIVERY_TIMEOUT_MS: '1000',
		RELAY_LEASE_MS: '2000',
		RELAY_POLL_INTERVAL_MS: '20',
		// No balance snapshots (a merchant/balance call at start) unless a suite asks for them.
		RELAY_STATEMENT_CHECK_S: '0',
		LOG_LEVEL: 'info',
		...extra,
	} as Record<string, string>;
}

export interface Received {
	path: string;
	body: string;
	headers: IncomingHttpHeaders;
	at: number;
}

export interface Answer {
	status: number;
	headers?: Record<string, string | string[]>;
	hangMs?: number;
	/** Response body; the status code as text by default. */
	body?: string;
	/**
	 * X-PayPalych-Receipt of a 2xx/3xx answer: 'accepted' by default, as the PayPalych Trigger
	 * answers; null sends none (what n8n itself answers while it starts up, or a generic webhook).
	 */
	receipt?: string | null;
}

export type Responder = (req: Received, nth: number) => Answer;

/**
 * A local HTTP target recording every request. It stands in for a PayPalych Trigger webhook: its
 * 2xx/3xx answers carry X-PayPalych-Receipt unless the responder says `receipt: null`.
 */
export class Target {
	received: Received[] = [];
	responder: Responder = () => ({ status: 200 });
	server: Server;
	port = 0;

	constructor() {
		this.server = createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (c: Buffer) => chunks.push(c));
			req.on('end', () => {
				const rec: Received = {
					path: req.url ?? '',
					body: Buffer.concat(chunks).toString('utf8'),
					headers: req.headers,
					at: Date.now(),
				};
				this.received.push(rec);
				const answer = this.responder(rec, this.received.length);
				const send = () => {
					if (res.destroyed) return;
					const receipt = answer.receipt === undefined ? 'accepted' : answer.receipt;
					const withReceipt = receipt !== null && answer.status >= 200 && answer.status < 400;
					res.writeHead(answer.status, {
						'content-type': 'text/plain',
						...(withReceipt ? { 'x-paypalych-receipt': receipt } : {}),
						...answer.headers,
					});
					res.end(answer.body ?? String(answer.status));
				};
				if (answer.hangMs) setTimeout(send, answer.hangMs);
				else send();
			});
		});
	}

	async listen(port = 0): Promise<this> {
		await new Promise<void>((resolve, reject) => {
			this.server.once('error', reject);
			this.server.listen(port, '127.0.0.1', () => resolve());
		});
		this.port = (this.server.address() as AddressInfo).port;
		return this;
	}

	url(path = '/webhook/pay'): string {
		return `http://127.0.0.1:${this.port}${path}`;
	}

	async close(): Promise<void> {
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}
}

/** A port that was free a moment ago (nothing listens on it). */
export async function freePort(): Promise<number> {
	return await getPort({ host: '127.0.0.1' });
}

/** Collects pino's JSON lines. */
export class LogSink {
	lines: string[] = [];
	write(chunk: string): void {
		this.lines.push(chunk);
	}
	get text(): string {
		return this.lines.join('');
	}
}

export interface RelayProcess {
	proc: ChildProcess;
	url: string;
	exited: Promise<number | null>;
	/** Everything the process wrote to stdout (its log) so far. */
	stdout: () => string;
}

/**
 * Starts a relay process, by default `node <RELAY_BIN>` (or `command args`), and waits for its
 * "relay listening" log line.
 */
export async function spawnRelay(
	env: Record<string, string>,
	options: { command?: string; args?: string[]; cwd?: string } = {},
): Promise<RelayProcess> {
	const proc = spawn(options.command ?? NODE, options.args ?? [RELAY_BIN], {
		cwd: options.cwd ?? ROOT,
		env: childEnv(env),
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const exited = new Promise<number | null>((resolve) =>
		proc.once('exit', (code) => resolve(code)),
	);
	let stdout = '';
	let stderr = '';
	proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
	let startTimer: NodeJS.Timeout | undefined;
	const url = await new Promise<string>((resolve, reject) => {
		let scanned = 0;
		proc.stdout!.on('data', (chunk: Buffer) => {
			stdout += chunk.toString();
			let nl: number;
			while ((nl = stdout.indexOf('\n', scanned)) >= 0) {
				const line = stdout.slice(scanned, nl);
				scanned = nl + 1;
				try {
					const entry = JSON.parse(line) as { msg?: string; url?: string };
					if (entry.msg === 'relay listening' && entry.url) resolve(entry.url);
				} catch {
					// not a log line
				}
			}
		});
		void exited.then((code) =>
			reject(new Error(`relay exited with ${code} before listening: ${stderr}`)),
		);
		startTimer = setTimeout(() => {
			// No "relay listening" line (a log level above info, a hang): stop it, or it outlives the test.
			proc.kill('SIGKILL');
			reject(new Error(`relay did not start: ${stderr}`));
		}, 15_000);
	}).finally(() => clearTimeout(startTimer));
	return { proc, url, exited, stdout: () => stdout };
}

/** Stops every relay process that still runs (`signal`, SIGTERM by default) and waits for each exit. */
export async function stopRelays(
	children: RelayProcess[],
	signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
	for (const c of children) {
		if (c.proc.exitCode === null && c.proc.signalCode === null) {
			c.proc.kill(signal);
			await c.exited;
		}
	}
}
