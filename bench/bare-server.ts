// The framework ceiling: a bare Fastify route, no auth, no database.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/bare', { schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({
  ok: true,
}));
await app.listen({ port: Number(process.env.PORT ?? 3199), host: '127.0.0.1' });
console.log('ready');
