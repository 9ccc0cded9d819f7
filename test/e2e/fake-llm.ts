/**
 * A stand-in for an OpenAI-compatible chat model, so that n8n's own AI Agent calls the PayPalych
 * node as a tool without a real model: the first answer of each conversation calls the one tool
 * offered with the arguments the test gives; once the tool has answered, the model says what the
 * tool answered. Every request is kept, so a test can read what the tool told the agent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, any>;

export interface FakeLlm {
	url: string;
	/** Arguments of the next tool call (one per conversation, in order). */
	toolCalls: Json[];
	requests: Json[];
	/** What the tool answered the agent, in each conversation that got that far. */
	toolAnswers(): string[];
	close(): Promise<void>;
}

function completion(message: Json, finish: string): Json {
	return {
		id: `chatcmpl-${Date.now()}`,
		object: 'chat.completion',
		created: Math.floor(Date.now() / 1000),
		model: 'fake-model',
		choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
		usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
	};
}

export async function startFakeLlm(): Promise<FakeLlm> {
	const state: FakeLlm = {
		url: '',
		toolCalls: [],
		requests: [],
		toolAnswers: () =>
			state.requests.flatMap((request) =>
				((request.messages as Json[]) ?? [])
					.filter((m) => m.role === 'tool')
					.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))),
			),
		close: async () => {},
	};
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			let body: Json = {};
			try {
				body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
			} catch {
				body = {};
			}
			state.requests.push(body);
			const messages = (body.messages as Json[]) ?? [];
			const toolMessage = [...messages].reverse().find((m) => m.role === 'tool');
			const tool = ((body.tools as Json[]) ?? [])[0]?.function?.name as string | undefined;
			const message: Json =
				toolMessage || !tool
					? { role: 'assistant', content: `The tool said: ${String(toolMessage?.content ?? '')}` }
					: {
							role: 'assistant',
							content: null,
							tool_calls: [
								{
									id: `call_${state.requests.length}`,
									type: 'function',
									function: {
										name: tool,
										arguments: JSON.stringify(state.toolCalls.shift() ?? {}),
									},
								},
							],
						};
			const finish = message.tool_calls ? 'tool_calls' : 'stop';
			if (body.stream === true) {
				res.writeHead(200, { 'content-type': 'text/event-stream' });
				const delta = message.tool_calls
					? {
							role: 'assistant',
							tool_calls: (message.tool_calls as Json[]).map((call, index) => ({ index, ...call })),
						}
					: { role: 'assistant', content: message.content };
				const chunk: Json = { ...completion({}, finish), object: 'chat.completion.chunk' };
				chunk.choices = [{ index: 0, delta, finish_reason: finish }];
				res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
				return;
			}
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify(completion(message, finish)));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
	return state;
}
