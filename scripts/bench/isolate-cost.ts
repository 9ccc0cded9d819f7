// What one isolate of n8n's default expression engine (`vm`) costs, measured in the benchmark's
// own process with the installed n8n's @n8n/expression-runtime: n8n takes a fresh one for every
// holder (an execution; a webhook call of any node but its own Webhook node with static
// parameters; a credential read from a webhook): its pool of one builds the next bridge as the
// last is taken, and disposes a bridge when it is released. So a holder costs one bridge built,
// initialised and disposed, which is what is timed here (CPU of this process, all threads).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { n8nInstallDir } from '../harness/n8n-install.ts';

interface Bridge {
	initialize(): Promise<void>;
	dispose(): Promise<void>;
}

/**
 * Milliseconds of CPU per isolate: the lowest of `rounds` rounds of `perRound` isolates each (the
 * work is fixed; a busier machine only adds to it).
 */
export async function isolateCpuMs(rounds = 5, perRound = 10): Promise<number> {
	const load = createRequire(join(n8nInstallDir(), 'node_modules', 'n8n', 'package.json'));
	const runtime = load('@n8n/expression-runtime') as {
		IsolatedVmBridge: new (options: { timeout: number; memoryLimit: number }) => Bridge;
	};
	// n8n's defaults (N8N_EXPRESSION_ENGINE_TIMEOUT, N8N_EXPRESSION_ENGINE_MEMORY_LIMIT).
	const lifecycle = async () => {
		const bridge = new runtime.IsolatedVmBridge({ timeout: 5000, memoryLimit: 128 });
		await bridge.initialize();
		await bridge.dispose();
	};
	for (let i = 0; i < 3; i++) await lifecycle();
	const figures: number[] = [];
	for (let round = 0; round < rounds; round++) {
		const before = process.cpuUsage();
		for (let i = 0; i < perRound; i++) await lifecycle();
		const used = process.cpuUsage(before);
		figures.push((used.user + used.system) / 1000 / perRound);
	}
	return Math.min(...figures);
}
