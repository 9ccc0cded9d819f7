import type { FastifyInstance } from 'fastify';

export interface HealthOptions {
	/** Resolves when the store answers (app.ts gives the store's ping, nothing else of it). */
	ping: () => Promise<unknown>;
}

/** What is wrong with a store that did not commit the readiness write. */
export type StoreProblem = 'read-only' | 'full' | 'busy' | 'closed' | 'unreachable' | 'failing';

const REASONS: Record<StoreProblem, string> = {
	'read-only': 'the store answers but refuses writes: it is read-only',
	full: 'the store cannot write: its disk is full',
	busy: 'the store did not commit in time: another connection holds a lock, or it is overloaded',
	closed: 'the store is closed: the relay is shutting down',
	unreachable:
		'the store cannot be reached: the database server is down, refuses the connection, or is gone',
	failing: 'the store refused the readiness write (the log has its error)',
};

/** PostgreSQL's SQLSTATE classes and codes, and Node's network codes, by what they mean here. */
const CODES: Array<[RegExp, StoreProblem]> = [
	[/^25006$/, 'read-only'],
	[/^53100$/, 'full'],
	[/^(55P03|57014|40P01)$/, 'busy'],
	[
		/^(08...|57P0[1-3]|3D000|28...|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE)$/,
		'unreachable',
	],
];

/** SQLite's messages (its errors cross the store's worker as text), and pg's own. */
const MESSAGES: Array<[RegExp, StoreProblem]> = [
	[/read-?only/i, 'read-only'],
	[/disk is full|no space left/i, 'full'],
	[/database is locked|database table is locked|SQLITE_BUSY/i, 'busy'],
	[/store is closed/i, 'closed'],
	[
		/connection terminated|timeout exceeded when trying to connect|unable to open database file|connect ECONNREFUSED|Connection refused/i,
		'unreachable',
	],
];

/** The problem a store's error names: by its code first (PostgreSQL, the network), else its text. */
export function storeProblem(error: unknown): StoreProblem {
	const code = (error as { code?: unknown } | undefined)?.code;
	if (typeof code === 'string')
		for (const [re, problem] of CODES) if (re.test(code)) return problem;
	const message = error instanceof Error ? error.message : String(error);
	for (const [re, problem] of MESSAGES) if (re.test(message)) return problem;
	return 'failing';
}

/**
 * Liveness (the process answers) and readiness (the store commits a write). A store that does not
 * is named: `problem` (read-only, full, busy, closed, unreachable, failing) and a `reason` a person
 * reads; its error itself goes to the log only.
 */
export async function healthRoutes(app: FastifyInstance, { ping }: HealthOptions): Promise<void> {
	app.get('/healthz', async () => ({ status: 'ok' }));

	app.get('/readyz', async (request, reply) => {
		try {
			await ping();
			return { status: 'ready' };
		} catch (error) {
			const problem = storeProblem(error);
			request.log.error({ err: error, problem }, `not ready: ${REASONS[problem]}`);
			return reply.code(503).send({ status: 'unavailable', problem, reason: REASONS[problem] });
		}
	});
}
