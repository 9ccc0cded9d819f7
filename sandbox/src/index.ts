/** The sandbox as a library: startSandbox listens, buildSandbox only builds. */
import type { FastifyInstance } from 'fastify';
import { createSandbox } from './app.ts';
import type { SandboxContext, SandboxOptions } from './context.ts';
import type { Profile } from './model.ts';

export { buildSandbox, createSandbox } from './app.ts';
export type { SandboxOptions } from './context.ts';
export { PROFILES, type Profile } from './model.ts';
export type { DeliveryAttempt } from './postbacks.ts';

export interface RunningSandbox {
	url: string;
	token: string;
	shopId: string;
	payoutAccountId: string;
	merchantId: string;
	/** The profile new merchants (and the demo merchant) start with. */
	profile: Profile;
	app: FastifyInstance;
	context: SandboxContext;
	close(): Promise<void>;
}

/** Builds the sandbox and listens (port 0 by default: a free port; host 127.0.0.1). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
	const { app, ctx } = createSandbox(options);
	const host = options.host ?? '127.0.0.1';
	await app.listen({ port: options.port ?? 0, host });
	const address = app.server.address();
	const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
	const shownHost =
		host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
	const url = `http://${shownHost}:${port}`;
	ctx.listenUrl = url;
	return {
		url: ctx.options.publicUrl ?? url,
		token: ctx.demo.token,
		shopId: ctx.demo.shopId,
		payoutAccountId: ctx.demo.payoutAccountId,
		merchantId: ctx.demo.merchantId,
		profile: ctx.options.profile,
		app,
		context: ctx,
		close: async () => {
			await app.close();
		},
	};
}
