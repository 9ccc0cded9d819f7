// The benchmark's stand-in for n8n: answers every POST with 200 at once, with the receipt header
// of a PayPalych Trigger (X-PayPalych-Receipt: accepted), and counts them
// (GET /count). Runs as its own process so that it does not share a thread with autocannon.
import { createServer } from 'node:http';

let received = 0;
const server = createServer((req, res) => {
	if (req.method === 'GET') {
		res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received }));
		return;
	}
	req.resume();
	req.on('end', () => {
		received += 1;
		res
			.writeHead(200, { 'content-type': 'text/plain', 'x-paypalych-receipt': 'accepted' })
			.end('OK');
	});
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
