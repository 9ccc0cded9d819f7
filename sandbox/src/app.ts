/** The app factory: one Fastify instance with the API, the pages and the control API. */
import formbody from '@fastify/formbody';
import Fastify, {
	type FastifyError,
	type FastifyInstance,
	type FastifyReply,
	type FastifyRequest,
} from 'fastify';
import { billRoutes } from './api/bill.ts';
import { payoutRoutes } from './api/payout.ts';
import { refundRoutes } from './api/refund.ts';
import { SandboxContext, type Fault, type SandboxOptions } from './context.ts';
import { controlRoutes } from './control.ts';
import { ApiError, endpointOf, errorBody, keyError } from './errors.ts';
import { bearerMerchant } from './api/common.ts';
import { pageRoutes } from './pages.ts';

const POST_ENDPOINTS = new Set([
	'bill/create',
	'bill/toggle_activity',
	'payout/personal/create',
	'payout/regular/create',
	'refund/full/create',
	'refund/partial/create',
]);

function takeFault(ctx: SandboxContext, path: string): Fault | undefined {
	const fault = ctx.faults.find(
		(candidate) => candidate.path === null || path.startsWith(candidate.path),
	);
	if (!fault) return undefined;
	fault.remaining -= 1;
	if (fault.remaining <= 0) ctx.faults = ctx.faults.filter((candidate) => candidate !== fault);
	return fault;
}

/** Requests whose answer is dropped after they were carried out (fault kind drop_after). */
const dropAfterHandling = new WeakSet<FastifyRequest>();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function applyFault(
	ctx: SandboxContext,
	request: FastifyRequest,
	reply: FastifyReply,
): Promise<unknown> {
	const path = request.url.split('?')[0] ?? request.url;
	const fault = takeFault(ctx, path);
	if (!fault) return undefined;
	switch (fault.kind) {
		case '500': {
			const error = new ApiError(
				500,
				{ success: false, message: 'api:error.general_error' },
				{},
				'general_error',
			);
			return reply.code(500).send(errorBody(error, formOf(ctx, request)));
		}
		case '429':
			return reply.code(429).header('retry-after', '1').send({ message: 'Too Many Attempts.' });
		case 'delay':
			await sleep(fault.delayMs);
			return undefined;
		case 'drop':
			reply.hijack();
			request.raw.socket.destroy();
			return reply;
		case 'drop_after':
			// The request is carried out (a payout made, money moved), then the connection drops
			// before the answer: a service that times out after it moved the money.
			dropAfterHandling.add(request);
			return undefined;
		case 'error': {
			const endpoint = endpointOf(path);
			const error = endpoint
				? keyError(endpoint, fault.key ?? 'general_error')
				: new ApiError(400, { success: false, message: `api:error.${fault.key}` }, {}, fault.key);
			return reply.code(error.status).send(errorBody(error, formOf(ctx, request)));
		}
	}
}

/** The error form of the merchant whose token the request carries (`message` without one). */
function formOf(ctx: SandboxContext, request: FastifyRequest): 'message' | 'error_code' {
	return bearerMerchant(ctx, request)?.errorForm ?? 'message';
}

/** Errors of the API: its own shapes; framework errors (body too large, bad JSON, bad media type) keep their 4xx. */
const apiErrorHandler = (ctx: SandboxContext) =>
	function handle(
		error: FastifyError | ApiError,
		request: FastifyRequest,
		reply: FastifyReply,
	): void {
		if (error instanceof ApiError) {
			void reply
				.code(error.status)
				.headers(error.headers)
				.send(errorBody(error, formOf(ctx, request)));
			return;
		}
		const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
		if (status >= 400 && status < 500) {
			void reply.code(status).send({ success: false, message: error.message });
			return;
		}
		void reply.code(500).send({ success: false, message: 'api:error.general_error' });
	};

export function createSandbox(options: SandboxOptions = {}): {
	app: FastifyInstance;
	ctx: SandboxContext;
} {
	const ctx = new SandboxContext(options);
	const app = Fastify({
		bodyLimit: ctx.options.bodyLimit,
		logger: false,
		forceCloseConnections: true,
	});
	void app.register(formbody, { bodyLimit: ctx.options.bodyLimit });

	app.addHook('onRequest', async (request, reply) => {
		if (!request.url.startsWith('/api/')) return undefined;
		const endpoint = (request.url.split('?')[0] ?? '').replace(/^\/api\/v1\//, '');
		ctx.calls.set(endpoint, (ctx.calls.get(endpoint) ?? 0) + 1);
		return applyFault(ctx, request, reply);
	});
	app.addHook('onSend', async (request, _reply, payload) => {
		if (dropAfterHandling.has(request)) request.raw.socket.destroy();
		return payload;
	});
	app.addHook('onClose', async () => {
		ctx.close();
	});

	void app.register(
		async (api) => {
			api.setErrorHandler(apiErrorHandler(ctx));
			await api.register(billRoutes, { ctx });
			await api.register(payoutRoutes, { ctx });
			await api.register(refundRoutes, { ctx });
		},
		{ prefix: '/api/v1' },
	);
	void app.register(controlRoutes, { ctx, prefix: '/_sandbox' });
	void app.register(pageRoutes, { ctx });

	app.setNotFoundHandler((request, reply) => {
		const path = request.url.split('?')[0] ?? '';
		const endpoint = endpointOf(path);
		if (endpoint && path.startsWith('/api/v1/')) {
			const allowed = POST_ENDPOINTS.has(endpoint) ? 'POST' : 'GET, HEAD';
			void reply
				.code(405)
				.header('allow', allowed)
				.send({
					message: `The ${request.method} method is not supported for route api/v1/${endpoint}. Supported methods: ${allowed}.`,
				});
			return;
		}
		void reply.code(404).send({
			success: false,
			message: `Not found: ${request.method} ${request.url.split('?')[0]}`,
		});
	});
	app.setErrorHandler(apiErrorHandler(ctx));
	return { app, ctx };
}

/** The Fastify instance, not listening (for `inject`). */
export function buildSandbox(options: SandboxOptions = {}): FastifyInstance {
	return createSandbox(options).app;
}
