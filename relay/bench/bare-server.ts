// The benchmark's baseline: a bare Fastify route answering 200 OK, no logger, no storage.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/postback/payment', async (_request, reply) =>
	reply.code(200).type('text/plain; charset=utf-8').send('OK'),
);
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const stop = (): void => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
