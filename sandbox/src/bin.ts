#!/usr/bin/env node
/** paypalych-sandbox: start the sandbox and print one JSON line with the demo merchant. */
import { parseArgs } from 'node:util';
import { startSandbox } from './index.ts';
import { PROFILES, type Profile } from './model.ts';

const { values } = parseArgs({
	options: {
		port: { type: 'string' },
		host: { type: 'string' },
		token: { type: 'string' },
		'time-factor': { type: 'string' },
		'public-url': { type: 'string' },
		'auto-advance-ms': { type: 'string' },
		'live-extras': { type: 'boolean' },
		profile: { type: 'string' },
		help: { type: 'boolean', short: 'h' },
	},
	strict: true,
});

if (values.help) {
	process.stdout.write(
		[
			'paypalych-sandbox [--port 8787] [--host 127.0.0.1] [--token T] [--time-factor 1] [--public-url URL] [--auto-advance-ms 0] [--live-extras] [--profile live|spec]',
			'',
			'  --profile live|spec  (SANDBOX_PROFILE) how the sandbox answers where the interface document',
			'                       leaves a choice open. live (default): what public integrations see:',
			'                       order_id on bills with --live-extras, a cursor only with per_page,',
			'                       inclusive finish_date, UTC dates, payment amount = OutSum, form',
			'                       postbacks. spec: no order_id on bills, Laravel pages (links/meta,',
			'                       ?page=N, per_page ignored), exclusive finish_date, Moscow dates,',
			'                       amount without the payer-paid commission, JSON postbacks.',
			'                       Per merchant: PATCH /_sandbox/merchants/:id {"profile": "spec"}.',
			'',
		].join('\n'),
	);
	process.exit(0);
}

const env = process.env;
function number(name: string, text: string | undefined, fallback: number): number {
	if (text === undefined || text === '') return fallback;
	const value = Number(text);
	if (!Number.isFinite(value) || value < 0) {
		process.stderr.write(`paypalych-sandbox: ${name} must be a non-negative number, got ${text}\n`);
		process.exit(2);
	}
	return value;
}

const profile = values.profile ?? env['SANDBOX_PROFILE'] ?? 'live';
if (!(PROFILES as readonly string[]).includes(profile)) {
	process.stderr.write(
		`paypalych-sandbox: --profile (SANDBOX_PROFILE) must be one of ${PROFILES.join(', ')}, got ${profile}\n`,
	);
	process.exit(2);
}

const sandbox = await startSandbox({
	port: number('--port', values.port ?? env['SANDBOX_PORT'], 8787),
	host: values.host ?? env['SANDBOX_HOST'] ?? '127.0.0.1',
	token: values.token ?? env['SANDBOX_TOKEN'] ?? undefined,
	timeFactor: number('--time-factor', values['time-factor'] ?? env['SANDBOX_TIME_FACTOR'], 1) || 1,
	publicUrl: values['public-url'] ?? env['SANDBOX_PUBLIC_URL'] ?? undefined,
	autoAdvanceMs: number(
		'--auto-advance-ms',
		values['auto-advance-ms'] ?? env['SANDBOX_AUTO_ADVANCE_MS'],
		0,
	),
	liveExtras: values['live-extras'] ?? env['SANDBOX_LIVE_EXTRAS'] === '1',
	profile: profile as Profile,
});

process.stdout.write(
	`${JSON.stringify({ url: sandbox.url, token: sandbox.token, shopId: sandbox.shopId, payoutAccountId: sandbox.payoutAccountId, merchantId: sandbox.merchantId, profile: sandbox.profile })}\n`,
);

let closing = false;
const stop = () => {
	if (closing) return;
	closing = true;
	sandbox.close().then(
		() => process.exit(0),
		(error: unknown) => {
			process.stderr.write(`paypalych-sandbox: ${String(error)}\n`);
			process.exit(1);
		},
	);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
