import { LogController } from 'fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { takeNote } from './log-context.ts';

/**
 * No token, signature or authorization header may reach the log. The relay never logs bodies,
 * fields, headers or its configuration; these paths are a second line of defence (few and without
 * wildcards: redaction runs on every line).
 */
export const REDACT_PATHS = [
	'req.headers.authorization',
	'headers.authorization',
	'SignatureValue',
	'fields.SignatureValue',
];

const QUIET_URLS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One line per request: arrival at debug, completion at info (or at the level the route noted) with
 * what the route noted (event id, duplicate, rejection reason); none for health and metrics scrapes.
 */
export class RelayLogController extends LogController {
	constructor() {
		super({ disableRequestLogging: (request) => QUIET_URLS.has(request.url) });
	}
	override incomingRequest(request: FastifyRequest): void {
		request.log.debug({ req: request }, 'incoming request');
	}
	override requestCompleted(
		error: Error | null,
		request: FastifyRequest,
		reply: FastifyReply,
	): void {
		if (this.isLogDisabled(request)) return;
		const note = takeNote(request);
		if (error) {
			reply.log.error(
				{ res: reply, err: error, responseTime: reply.elapsedTime },
				'request errored',
			);
			return;
		}
		const { msg = 'request completed', level = 'info', ...details } = note ?? {};
		if (!(reply.log as Logger).isLevelEnabled(level)) return; // the relay's loggers are pino's
		reply.log[level](
			{ req: request, res: reply, responseTime: reply.elapsedTime, ...details },
			msg,
		);
	}
}

/**
 * pino JSON at `level`, written to `stream` (stdout by default, synchronously). Each line's `time`
 * is an ISO 8601 UTC time (`2026-11-26T19:13:53.123Z`), as a person or a log shipper reads it.
 */
export function createLogger(level: string, stream?: DestinationStream): Logger {
	const options = {
		level,
		redact: { paths: REDACT_PATHS, censor: '[redacted]' },
		timestamp: pino.stdTimeFunctions.isoTime,
	};
	return stream ? pino(options, stream) : pino(options);
}

/** How long a log line may wait in the stdout buffer at most. */
export const LOG_FLUSH_MS = 200;

/**
 * The production logger: stdout written asynchronously in chunks of up to 4 KiB, flushed every
 * LOG_FLUSH_MS and when the process exits. A line costs no write system call of its own (a
 * synchronous destination makes one per request). Only a SIGKILL can lose the last lines; the
 * event itself is committed before its 200 either way.
 */
export function bufferedStdoutLogger(level: string): { logger: Logger; stop: () => void } {
	const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
	const logger = createLogger(level, destination);
	// The destination's own flush, without a callback: logger.flush() hands it one, and each such
	// call adds a 'drain' listener, which piles up while writes are always in flight under load.
	const timer = setInterval(() => destination.flush(), LOG_FLUSH_MS);
	timer.unref();
	return {
		logger,
		stop: () => {
			clearInterval(timer);
			logger.flush();
		},
	};
}
