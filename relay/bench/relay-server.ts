// The relay as its bin starts it (compiled into relay/dist by `npm run build`), with one switch for the benchmark:
// BENCH_DELIVERY=paused builds it without a forwarder, so that ingestion can also be measured
// without delivery competing for the CPU (the events and their deliveries are stored all the same).
import { start } from '../src/server.ts';

await start(process.env, {
	handleSignals: true,
	deps: { forwarder: process.env.BENCH_DELIVERY !== 'paused' },
});
