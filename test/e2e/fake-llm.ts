/**
 * A stand-in for an OpenAI-compatible chat model, so that n8n's own AI Agent calls the PayPalych
 * node as a tool without a real model: the first answer of each conversation calls the one tool
 * offered with the arguments the test gives; once the tool has answered, the model says what the
 * tool answered. Every request is kept, so a test can read what the tool told the agent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WorkflowJson } from '../../scripts/harness/n8n.ts';

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

/** A node of n8n's AI Agent's tool slot: a node type with its parameters and credentials. */
export interface AgentTool {
	name: string;
	type: string;
	parameters: Json;
	credentials: Json;
}

/**
 * A workflow in which n8n's AI Agent, with the fake model as its OpenAI chat model (`model`: an
 * openAiApi credential whose URL is the fake's), has one tool. `triggers` start the agent (a
 * Manual Trigger named "Start" by default, which `n8n execute` runs).
 */
export function agentWorkflow(options: {
	id: string;
	prompt: string;
	model: { id: string; name: string };
	tool: AgentTool;
	agentName?: string;
	triggers?: Json[];
}): WorkflowJson {
	const agentName = options.agentName ?? 'Agent';
	const triggers = options.triggers ?? [
		{
			id: `${options.id}-start`,
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
	];
	return {
		id: options.id,
		name: `E2E: AI Agent with ${options.tool.name}`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			...triggers,
			{
				id: `${options.id}-agent`,
				name: agentName,
				type: '@n8n/n8n-nodes-langchain.agent',
				typeVersion: 3,
				position: [240, 0],
				parameters: { promptType: 'define', text: options.prompt, options: {} },
			},
			{
				id: `${options.id}-model`,
				name: 'Chat model',
				type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
				typeVersion: 1.2,
				position: [240, 200],
				parameters: { model: { __rl: true, mode: 'id', value: 'fake-model' }, options: {} },
				credentials: { openAiApi: options.model },
			},
			{
				id: `${options.id}-tool`,
				typeVersion: 1,
				position: [480, 200],
				...options.tool,
			},
		],
		connections: {
			...Object.fromEntries(
				triggers.map((t) => [t.name, { main: [[{ node: agentName, type: 'main', index: 0 }]] }]),
			),
			'Chat model': {
				ai_languageModel: [[{ node: agentName, type: 'ai_languageModel', index: 0 }]],
			},
			[options.tool.name]: { ai_tool: [[{ node: agentName, type: 'ai_tool', index: 0 }]] },
		},
	} as unknown as WorkflowJson;
}
