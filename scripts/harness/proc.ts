/**
 * Child processes and HTTP helpers shared by `npm start` and the end-to-end suite.
 *
 * Children run in their own process group (`detached`), so a Ctrl-C in the terminal reaches only
 * the script, which then stops them in order. If the script dies without cleaning up, an `exit`
 * hook still kills every group it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import getPort from 'get-port';

const running = new Set<ChildProcess>();
const exitCleanups = new Set<() => void>();
let exitHookInstalled = false;

function installExitHook(): void {
	if (exitHookInstalled) return;
	exitHookInstalled = true;
	process.on('exit', () => {
		for (const child of running) killGroup(child, 'SIGKILL');
		for (const cleanup of exitCleanups) {
			try {
				cleanup();
			} catch {
				// best effort: the process is going away
			}
		}
	});
}

/**
 * Runs `cleanup` (synchronous: nothing asynchronous runs at exit) when this process exits, after
 * its children are killed, unless the returned function is called first (the clean-up ran already).
 */
export function onProcessExit(cleanup: () => void): () => void {
	installExitHook();
	exitCleanups.add(cleanup);
	return () => exitCleanups.delete(cleanup);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			// already gone
		}
	}
}

/** A free TCP port on the loopback interface: `preferred` when it is free, else one the OS picks. */
export async function freePort(preferred?: number): Promise<number> {
	return await getPort({ host: '127.0.0.1', port: preferred });
}

export function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface ServiceOptions {
	name: string;
	command: string;
	args: string[];
	cwd?: string;
	env?: Record<string, string | undefined>;
	/** Append the child's stdout and stderr to this file. */
	logFile?: string;
	/** Also copy the child's output to this stream (for example process.stdout). */
	echo?: NodeJS.WritableStream;
	/** Called with every complete line the child writes to stdout. */
	onLine?: (line: string) => void;
	/** Variables of this process's environment that the child must not inherit (only `env` sets them). */
	withoutInherited?: RegExp;
}

export interface Service {
	name: string;
	child: ChildProcess;
	/** Resolves with the exit code (or the signal name) once the process is gone. */
	exited: Promise<number | string>;
	/** The last lines of output, for error messages. */
	tail(): string;
	/** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves once it is gone. */
	stop(graceMs?: number): Promise<void>;
}

export function startService(options: ServiceOptions): Service {
	installExitHook();
	let log: WriteStream | undefined;
	if (options.logFile) {
		mkdirSync(dirname(options.logFile), { recursive: true });
		log = createWriteStream(options.logFile, { flags: 'a' });
	}
	const inherited = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !options.withoutInherited?.test(name)),
	);
	const child = spawn(options.command, options.args, {
		cwd: options.cwd,
		env: { ...inherited, ...options.env } as NodeJS.ProcessEnv,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	running.add(child);
	const lines: string[] = [];
	let partial = '';
	const remember = (text: string) => {
		for (const line of text.split('\n')) {
			if (line.trim() === '') continue;
			lines.push(line);
			if (lines.length > 60) lines.shift();
		}
	};
	child.stdout?.on('data', (chunk: Buffer) => {
		const text = chunk.toString('utf8');
		log?.write(chunk);
		options.echo?.write(chunk);
		remember(text);
		if (options.onLine) {
			partial += text;
			const parts = partial.split('\n');
			partial = parts.pop() ?? '';
			for (const line of parts) options.onLine(line);
		}
	});
	child.stderr?.on('data', (chunk: Buffer) => {
		log?.write(chunk);
		options.echo?.write(chunk);
		remember(chunk.toString('utf8'));
	});
	const exited = new Promise<number | string>((resolve) => {
		child.on('exit', (code, signal) => {
			running.delete(child);
			log?.end();
			resolve(code ?? signal ?? 'unknown');
		});
		child.on('error', (error) => {
			running.delete(child);
			remember(`spawn failed: ${error.message}`);
			resolve('spawn-error');
		});
	});
	return {
		name: options.name,
		child,
		exited,
		tail: () => lines.slice(-25).join('\n'),
		async stop(graceMs = 15_000) {
			if (child.exitCode !== null || child.signalCode !== null || !running.has(child)) {
				await exited;
				return;
			}
			killGroup(child, 'SIGTERM');
			const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
			await exited;
			clearTimeout(timer);
			// Grandchildren (n8n's task runner) may outlive their parent briefly: end the group.
			killGroup(child, 'SIGKILL');
		},
	};
}

export interface RunResult {
	code: number;
	stdout: string;
	stderr: string;
}

/** Runs a command to completion and collects its output. */
export async function run(
	command: string,
	args: string[],
	options: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<RunResult> {
	installExitHook();
	return await new Promise((resolve, reject) => {
		const child = spawn(command, args, {
			cwd: options.cwd,
			env: { ...process.env, ...options.env } as NodeJS.ProcessEnv,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		});
		running.add(child);
		const out: Buffer[] = [];
		const err: Buffer[] = [];
		child.stdout?.on('data', (c: Buffer) => out.push(c));
		child.stderr?.on('data', (c: Buffer) => err.push(c));
		const timer =
			options.timeoutMs === undefined
				? undefined
				: setTimeout(() => killGroup(child, 'SIGKILL'), options.timeoutMs);
		child.on('error', (error) => {
			running.delete(child);
			if (timer) clearTimeout(timer);
			reject(error);
		});
		child.on('exit', (code, signal) => {
			running.delete(child);
			if (timer) clearTimeout(timer);
			resolve({
				code: code ?? (signal ? 128 : 1),
				stdout: Buffer.concat(out).toString('utf8'),
				stderr: Buffer.concat(err).toString('utf8'),
			});
		});
	});
}

/** Polls a URL until it answers 2xx; fails early if `service` exits first. */
export async function waitForHttp(
	url: string,
	options: { timeoutMs?: number; service?: Service } = {},
): Promise<void> {
	const deadline = Date.now() + (options.timeoutMs ?? 60_000);
	let exited: number | string | undefined;
	void options.service?.exited.then((code) => {
		exited = code;
	});
	let lastError = '';
	while (Date.now() < deadline) {
		if (exited !== undefined) {
			throw new Error(
				`${options.service?.name} exited (${exited}) before ${url} answered:\n${options.service?.tail()}`,
			);
		}
		try {
			const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
			if (res.ok) {
				await res.body?.cancel();
				return;
			}
			lastError = `HTTP ${res.status}`;
			await res.body?.cancel();
		} catch (error) {
			lastError = error instanceof Error ? error.message : String(error);
		}
		await sleep(150);
	}
	throw new Error(
		`${url} did not answer within the time limit (${lastError})${options.service ? `:\n${options.service.tail()}` : ''}`,
	);
}

/** JSON over HTTP; throws with the status and body on a non-2xx answer. */
export async function httpJson<T = unknown>(
	method: string,
	url: string,
	body?: unknown,
	headers: Record<string, string> = {},
): Promise<T> {
	const res = await fetch(url, {
		method,
		headers: {
			accept: 'application/json',
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
			...headers,
		},
		body: body === undefined ? undefined : JSON.stringify(body),
		signal: AbortSignal.timeout(30_000),
	});
	const text = await res.text();
	if (!res.ok)
		throw new Error(`${method} ${url} answered HTTP ${res.status}: ${text.slice(0, 500)}`);
	return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** What a stack started, stopped in reverse order; a failure to stop one is printed, not thrown. */
export function stopList(print: (line: string) => void): {
	push(stop: () => Promise<void>): void;
	stopAll(): Promise<void>;
} {
	const stoppers: Array<() => Promise<void>> = [];
	return {
		push: (stop) => void stoppers.push(stop),
		async stopAll() {
			for (const stop of stoppers.splice(0).reverse()) {
				try {
					await stop();
				} catch (error) {
					print(`stopping failed: ${error instanceof Error ? error.message : String(error)}`);
				}
			}
		},
	};
}

/** Phase timings printed as the work goes ("how long each phase took"). */
export class Phases {
	private readonly started = Date.now();
	private last = Date.now();
	readonly entries: Array<{ name: string; ms: number }> = [];
	private readonly label: string;
	private readonly out: (line: string) => void;
	constructor(
		label: string,
		out: (line: string) => void = (line) => process.stdout.write(line + '\n'),
	) {
		this.label = label;
		this.out = out;
	}

	mark(name: string): number {
		const now = Date.now();
		const ms = now - this.last;
		this.last = now;
		this.entries.push({ name, ms });
		this.out(`[${this.label}] ${name}: ${(ms / 1000).toFixed(1)} s`);
		return ms;
	}

	total(): number {
		const ms = Date.now() - this.started;
		this.out(`[${this.label}] total: ${(ms / 1000).toFixed(1)} s`);
		return ms;
	}
}
