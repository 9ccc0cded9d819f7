/**
 * A TCP proxy that puts network faults between two of the relay's parts, where `tc netem` in a
 * network namespace is not available (this machine's kernel has no sch_netem). What it does is
 * what those faults do to a TCP connection, as the two ends see it:
 *
 * - latency: every chunk, in each direction, arrives `latencyMs` late, in order;
 * - loss: a lost segment is sent again by the kernel after a retransmission timeout, so with
 *   probability `lossRate` a chunk comes `rtoMs` later (doubling while losses follow each other),
 *   still in order: TCP never delivers a lost segment as a hole;
 * - unreachable (`down()`): the connections open at that moment are cut, and new ones are held
 *   without an answer (a host that is gone) until `up()`, which cuts them;
 * - a cut in the middle of an answer (`cutAnswers`): an answer (data from the upstream side that
 *   starts with `HTTP/`) is forwarded for its first bytes, then both sides are closed.
 */
import { createServer, connect, type Server, type Socket, type AddressInfo } from 'node:net';

export interface FaultOptions {
	latencyMs?: number;
	lossRate?: number;
	rtoMs?: number;
	/** Probability that an HTTP answer is cut after its first `cutAfterBytes` bytes. */
	cutAnswers?: number;
	cutAfterBytes?: number;
	/** Random numbers (tests give a seeded one). */
	random?: () => number;
}

/** A small seeded generator (mulberry32): the same faults on every run. */
export function seeded(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

export class FaultProxy {
	readonly #server: Server;
	readonly #upstream: { host: string; port: number };
	readonly #sockets = new Set<Socket>();
	readonly #held = new Set<Socket>();
	#down = false;
	options: FaultOptions;
	/** Counters for the report. */
	readonly stats = { connections: 0, chunks: 0, delayedByLoss: 0, cutAnswers: 0, heldWhileDown: 0 };

	constructor(upstream: { host: string; port: number }, options: FaultOptions = {}) {
		this.#upstream = upstream;
		this.options = options;
		this.#server = createServer((client) => this.#accept(client));
	}

	async listen(): Promise<number> {
		await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
		return (this.#server.address() as AddressInfo).port;
	}

	/** Unreachable: open connections cut, new ones held without an answer. */
	down(): void {
		this.#down = true;
		for (const s of this.#sockets) s.destroy();
	}

	up(): void {
		this.#down = false;
		for (const s of this.#held) s.destroy();
		this.#held.clear();
	}

	async close(): Promise<void> {
		for (const s of [...this.#sockets, ...this.#held]) s.destroy();
		await new Promise<void>((resolve) => this.#server.close(() => resolve()));
	}

	#random(): number {
		return (this.options.random ?? Math.random)();
	}

	#accept(client: Socket): void {
		client.on('error', () => {});
		if (this.#down) {
			this.stats.heldWhileDown += 1;
			this.#held.add(client);
			client.on('close', () => this.#held.delete(client));
			return;
		}
		this.stats.connections += 1;
		const upstream = connect(this.#upstream.port, this.#upstream.host);
		upstream.on('error', () => client.destroy());
		this.#sockets.add(client);
		this.#sockets.add(upstream);
		const closeBoth = () => {
			client.destroy();
			upstream.destroy();
			this.#sockets.delete(client);
			this.#sockets.delete(upstream);
		};
		client.on('close', closeBoth);
		upstream.on('close', closeBoth);
		this.#pipe(client, upstream, false, closeBoth);
		this.#pipe(upstream, client, true, closeBoth);
	}

	/** Forwards `from` to `to` with latency and loss, in order; answers may be cut. */
	#pipe(from: Socket, to: Socket, answers: boolean, closeBoth: () => void): void {
		let last = 0;
		let losses = 0;
		from.on('data', (chunk: Buffer) => {
			const { latencyMs = 0, lossRate = 0, rtoMs = 200 } = this.options;
			this.stats.chunks += 1;
			let delay = latencyMs;
			if (lossRate > 0 && this.#random() < lossRate) {
				losses += 1;
				delay += rtoMs * 2 ** Math.min(losses - 1, 4);
				this.stats.delayedByLoss += 1;
			} else losses = 0;
			let data = chunk;
			let cut = false;
			if (
				answers &&
				(this.options.cutAnswers ?? 0) > 0 &&
				chunk.subarray(0, 5).toString('latin1') === 'HTTP/' &&
				this.#random() < (this.options.cutAnswers ?? 0)
			) {
				data = chunk.subarray(0, this.options.cutAfterBytes ?? 12);
				cut = true;
				this.stats.cutAnswers += 1;
			}
			const at = Math.max(last, Date.now() + delay);
			last = at;
			setTimeout(
				() => {
					if (!to.destroyed) to.write(data);
					if (cut) setTimeout(closeBoth, 5);
				},
				Math.max(0, at - Date.now()),
			);
		});
		from.on('end', () => {
			setTimeout(() => to.end(), Math.max(0, last - Date.now()));
		});
	}
}
