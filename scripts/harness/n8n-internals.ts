/**
 * Every place the harness reads n8n's internals: its REST routes under `/rest` (owner set-up,
 * login, workflows, executions, node types, a credential's update), its database (`webhook_entity`) and the
 * shape of its execution data. Written for n8n 2.41.1 (N8N_INTERNALS_VERSION): none of this is a
 * public API, so a newer n8n may change it; check here first when the end-to-end suite breaks
 * after an n8n upgrade.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parse as parseFlatted } from 'flatted';
import { psql } from './pg-cli.ts';

/** The n8n version these routes, tables and shapes were read from. */
export const N8N_INTERNALS_VERSION = '2.41.1';

export interface Owner {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

export interface RegisteredWebhook {
	workflowId: string;
	node: string;
	method: string;
	webhookPath: string;
	url: string;
}

export interface ExecutionSummary {
	id: string;
	workflowId: string;
	status: string;
	mode: string;
	startedAt: string;
	stoppedAt?: string;
	finished?: boolean;
}

export interface NodeRun {
	data?: { main?: Array<Array<{ json: Record<string, unknown> }> | null> };
	error?: { message?: string; description?: string };
	executionStatus?: string;
}

export interface ExecutionRun {
	status?: string;
	mode?: string;
	finished?: boolean;
	data: {
		resultData: {
			runData: Record<string, NodeRun[]>;
			error?: { message?: string };
			lastNodeExecuted?: string;
		};
	};
}

/** The items a node put out on its first output in its first (or given) run. */
export function nodeOutput(
	run: ExecutionRun,
	nodeName: string,
	runIndex = 0,
	output = 0,
): Array<Record<string, unknown>> {
	const runs = run.data.resultData.runData[nodeName];
	if (!runs || !runs[runIndex]) return [];
	return (runs[runIndex].data?.main?.[output] ?? []).map((item) => item.json);
}

/** Whether n8n has created its database in this data folder (it has run there before). */
export function hasDatabase(dataFolder: string): boolean {
	return existsSync(join(dataFolder, 'database.sqlite'));
}

/** The production webhooks n8n has registered, read from its database (as it serves them). */
export function registeredWebhooks(dataFolder: string, baseUrl: string): RegisteredWebhook[] {
	const db = new DatabaseSync(join(dataFolder, 'database.sqlite'), { readOnly: true });
	try {
		const rows = db
			.prepare('SELECT workflowId, node, method, webhookPath FROM webhook_entity')
			.all() as Array<{
			workflowId: string;
			node: string;
			method: string;
			webhookPath: string;
		}>;
		return rows.map((r) => ({ ...r, url: `${baseUrl}/webhook/${r.webhookPath}` }));
	} finally {
		db.close();
	}
}

/** The same, read from n8n's PostgreSQL database (DB_TYPE=postgresdb, as in queue mode). */
export function registeredWebhooksOnPostgres(
	database: string,
	baseUrl: string,
): RegisteredWebhook[] {
	return psql('SELECT "workflowId", node, method, "webhookPath" FROM webhook_entity', database).map(
		([workflowId, node, method, webhookPath]) => ({
			workflowId,
			node,
			method,
			webhookPath,
			url: `${baseUrl}/webhook/${webhookPath}`,
		}),
	);
}

/** A logged-in owner's session with n8n's REST API. */
export class N8nSession {
	/** The instance's address (read at each call: the port may be picked after construction). */
	private readonly url: () => string;
	private cookie: string | undefined;
	private readonly browserId = randomUUID();

	constructor(url: () => string) {
		this.url = url;
	}

	private get baseUrl(): string {
		return this.url();
	}

	/** Forgets the session cookie (n8n restarted or stopped). */
	logout(): void {
		this.cookie = undefined;
	}

	/** Sets up the instance owner on a fresh instance, or logs in when it exists. */
	async ensureOwner(owner: Owner, userFolder: string): Promise<void> {
		if (await this.tryLogin(owner)) return;
		const res = await fetch(`${this.baseUrl}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'browser-id': this.browserId },
			body: JSON.stringify(owner),
		});
		const text = await res.text();
		if (!res.ok) {
			const exists = /already set ?up/i.test(text);
			throw new Error(
				exists
					? `the n8n owner in ${userFolder} exists with another e-mail or password than ${owner.email}: log in with yours, or delete that folder to start afresh`
					: `owner set-up failed: HTTP ${res.status} ${text.slice(0, 300)}`,
			);
		}
		this.takeCookie(res);
		if (!this.cookie) throw new Error('owner set-up answered without a session cookie');
	}

	private async tryLogin(owner: Owner): Promise<boolean> {
		const res = await fetch(`${this.baseUrl}/rest/login`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'browser-id': this.browserId },
			body: JSON.stringify({ emailOrLdapLoginId: owner.email, password: owner.password }),
		});
		await res.text();
		if (!res.ok) return false;
		this.takeCookie(res);
		return this.cookie !== undefined;
	}

	private takeCookie(res: Response): void {
		for (const header of res.headers.getSetCookie()) {
			const m = /^(n8n-auth=[^;]+)/.exec(header);
			if (m) this.cookie = m[1];
		}
	}

	/** Calls the REST API as the logged-in owner (ensureOwner first); returns `data`. */
	async rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
		if (!this.cookie) throw new Error('not logged in: call ensureOwner() first');
		const res = await fetch(`${this.baseUrl}/rest${path}`, {
			method,
			headers: {
				cookie: this.cookie,
				'browser-id': this.browserId,
				accept: 'application/json',
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		if (!res.ok)
			throw new Error(`${method} /rest${path} answered HTTP ${res.status}: ${text.slice(0, 500)}`);
		const parsed = text === '' ? undefined : (JSON.parse(text) as { data?: T });
		return (parsed && typeof parsed === 'object' && 'data' in parsed ? parsed.data : parsed) as T;
	}

	/** Publishes (activates) a workflow, as the editor's Publish button does. */
	async activateWorkflow(id: string): Promise<void> {
		const workflow = await this.rest<{ versionId: string; activeVersionId?: string | null }>(
			'GET',
			`/workflows/${id}`,
		);
		if (workflow.activeVersionId && workflow.activeVersionId === workflow.versionId) return;
		await this.rest('POST', `/workflows/${id}/activate`, { versionId: workflow.versionId });
	}

	/** Whether a workflow is published with its current version. */
	async isActive(id: string): Promise<boolean> {
		const workflow = await this.rest<{ versionId: string; activeVersionId?: string | null }>(
			'GET',
			`/workflows/${id}`,
		);
		return Boolean(workflow.activeVersionId) && workflow.activeVersionId === workflow.versionId;
	}

	/** Executions of a workflow, newest first, as the executions list shows them. */
	async executions(workflowId: string): Promise<ExecutionSummary[]> {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const data = await this.rest<{ results: ExecutionSummary[] } | ExecutionSummary[]>(
			'GET',
			`/executions?filter=${filter}&limit=100`,
		);
		return Array.isArray(data) ? data : data.results;
	}

	/** One execution with its run data, which n8n stores as `flatted` text. */
	async execution(id: string): Promise<ExecutionRun> {
		const data = await this.rest<{
			data: string | ExecutionRun['data'];
			status: string;
			mode: string;
			workflowId?: string;
		}>('GET', `/executions/${id}`);
		const runData =
			typeof data.data === 'string' ? (parseFlatted(data.data) as ExecutionRun['data']) : data.data;
		return { ...data, data: runData } as ExecutionRun;
	}

	/**
	 * Saves a credential's new data, as the editor's Save button does (PATCH /rest/credentials/:id):
	 * every field of `data` is written, so pass the whole credential, not only what changed.
	 */
	async updateCredential(credential: {
		id: string;
		name: string;
		type: string;
		data: Record<string, unknown>;
	}): Promise<void> {
		const { id, ...rest } = credential;
		await this.rest('PATCH', `/credentials/${encodeURIComponent(id)}`, rest);
	}

	/** The descriptions of the given node types, as the editor loads them. */
	async nodeTypes<T = Record<string, unknown>>(
		types: Array<{ name: string; version: number }>,
	): Promise<T[]> {
		return await this.rest<T[]>('POST', '/node-types', { nodeInfos: types });
	}
}
