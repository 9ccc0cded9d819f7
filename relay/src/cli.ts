import { BackupError, backupStore, restoreStore } from './backup.ts';
import { ConfigError, StartupError, TARGET_VARIABLES, variableHelp } from './config.ts';
import { RELAY_VERSION } from './metrics.ts';
import { start } from './server.ts';

const USAGE = `Usage: paypalych-relay [--help | --version]
       paypalych-relay backup FILE
       paypalych-relay restore FILE

Receives PayPalych postbacks and redirects, verifies and stores them, and forwards them to n8n
webhooks until they are delivered. Configured by environment variables only; a RELAY_* or
PAYPALYCH_* variable the relay does not know is refused, and so is any other one letter from
a variable it reads (PROT, LOG_LEVL).

backup FILE copies the SQLite store RELAY_DATABASE names into FILE while the relay runs (a new
file, mode 0600: it holds every payer's e-mail and phone). restore FILE puts such a copy in place
of RELAY_DATABASE while no relay has it open (the store it replaces is kept beside it); a relay
started then delivers what was pending at the backup. A PostgreSQL store: pg_dump, pg_restore.`;

/** The --help text: what must be set, then every variable of the schema with its default. */
export function helpText(env: Record<string, string | undefined> = process.env): string {
	const variables = variableHelp(env);
	const width = Math.max(...variables.map((v) => v.name.length));
	const lines = variables.map((v) => {
		const marks = [v.required, v.default === undefined ? undefined : `default: ${v.default}`];
		return `  ${v.name.padEnd(width)}  ${v.description} [${marks.filter(Boolean).join('; ')}]`;
	});
	const required = variables.filter((v) => v.required === 'required').map((v) => v.name);
	return `${USAGE}

Required: ${required.join(', ')}, and at least one of ${TARGET_VARIABLES.join(', ')}.

Environment variables:
${lines.join('\n')}

Version ${RELAY_VERSION}. Documentation: https://github.com/n8n-nodes-paypalych/n8n-nodes-paypalych/tree/main/relay
`;
}

/** Runs the command line: --help, --version, or the relay itself. */
export async function main(argv: string[]): Promise<void> {
	if (argv.includes('--help') || argv.includes('-h')) {
		process.stdout.write(helpText());
		return;
	}
	if (argv.includes('--version') || argv.includes('-v')) {
		process.stdout.write(`${RELAY_VERSION}\n`);
		return;
	}
	if (argv[0] === 'backup' || argv[0] === 'restore') {
		await backupCommand(argv[0], argv.slice(1));
		return;
	}
	if (argv.length > 0) {
		process.stderr.write(
			`paypalych-relay: unknown argument ${argv[0]}; the relay is configured by environment variables (see paypalych-relay --help)\n`,
		);
		process.exit(2);
	}
	try {
		await start(process.env, { handleSignals: true });
	} catch (error) {
		if (error instanceof ConfigError) {
			process.stderr.write(`paypalych-relay: ${error.message}\n`);
			process.exit(2);
		}
		if (error instanceof StartupError) {
			process.stderr.write(`paypalych-relay: cannot start: ${error.message}\n`);
			process.exit(1);
		}
		process.stderr.write(
			`paypalych-relay: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
		);
		process.exit(1);
	}
}

/**
 * `paypalych-relay backup FILE`: a consistent copy of the SQLite store, taken while it runs;
 * `paypalych-relay restore FILE`: the copy in place of the store, while no relay has it open.
 */
async function backupCommand(command: 'backup' | 'restore', args: string[]): Promise<void> {
	const database = process.env.RELAY_DATABASE;
	const fileWord = command === 'backup' ? 'new FILE' : 'backup FILE';
	if (args.length !== 1 || !database) {
		process.stderr.write(
			`paypalych-relay ${command}: ${args.length !== 1 ? `name one ${fileWord}: paypalych-relay ${command} FILE` : `set RELAY_DATABASE to the store to ${command === 'backup' ? 'back up' : 'restore into'}`}\n`,
		);
		process.exit(2);
	}
	try {
		if (command === 'backup') {
			const { pages } = await backupStore(database, args[0]);
			process.stdout.write(
				`paypalych-relay: backed up ${database} to ${args[0]} (${pages} pages, mode 0600). To restore: stop the relay, run paypalych-relay restore ${args[0]}, start the relay; it delivers what was pending.\n`,
			);
			return;
		}
		const { pages, kept } = await restoreStore(database, args[0]);
		process.stdout.write(
			`paypalych-relay: restored ${args[0]} into ${database} (${pages} pages)${kept ? `; the store it replaced is kept as ${kept}` : ''}. Start the relay: it delivers what was pending at the backup.\n`,
		);
	} catch (error) {
		if (!(error instanceof BackupError)) throw error;
		process.stderr.write(`paypalych-relay ${command}: ${error.message}\n`);
		process.exit(2);
	}
}
