// The store's writer thread: owns the SQLite connection, so fsyncs never block the HTTP loop.
// Calls that arrive while a commit is in progress queue up and share the next transaction.
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteEngine } from './engine.ts';
import type { EngineCall } from './engine.ts';

interface Message extends EngineCall {
	id: number;
}

const port = parentPort!;
let engine: SqliteEngine;
try {
	engine = new SqliteEngine((workerData as { path: string }).path);
	port.postMessage({ ready: true });
} catch (error) {
	port.postMessage({ ready: false, error: error instanceof Error ? error.message : String(error) });
	process.exit(1);
}

let queue: Message[] = [];
let scheduled = false;

function flush(): void {
	scheduled = false;
	const batch = queue;
	queue = [];
	if (batch.length === 0) return;
	const results = engine.runBatch(batch);
	port.postMessage(batch.map((m, i) => ({ id: m.id, ...results[i] })));
}

port.on('message', (message: Message[] | { close: true }) => {
	if ('close' in message) {
		flush();
		engine.close();
		port.postMessage({ closed: true });
		port.close();
		return;
	}
	engine.noteMessage();
	for (const m of message) queue.push(m);
	if (!scheduled) {
		scheduled = true;
		setImmediate(flush);
	}
});
