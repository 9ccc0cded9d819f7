// The built nodes load on the oldest n8n the package supports (docs/merchant/install.md,
// *Versions*). n8n loads a community node by requiring its file and constructing the class, with
// `n8n-workflow` resolved to the copy n8n ships. Here that copy is n8n-workflow 1.29.1 (the
// devDependency alias n8n-workflow-1-29; n8n 1.29.1 ships it): the compiled package is copied
// beside a node_modules/n8n-workflow that is that version, then required and constructed.
// The current n8n-workflow (2.x) is checked the same way, and every name the compiled code reads
// from n8n-workflow must exist in both.
import {
	cpSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
	symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(__dirname, '..', '..');
const OLDEST = { alias: 'n8n-workflow-1-29', version: '1.29.1' };
const CURRENT = { alias: 'n8n-workflow', version: '' };

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
	n8n: { nodes: string[]; credentials: string[] };
};

type Constructed = { description: { name: string; inputs: unknown; outputs: unknown } };

/** The package's built files beside a node_modules/n8n-workflow that is `alias`. */
function installBeside(alias: string): string {
	const dir = mkdtempSync(join(tmpdir(), `paypalych-${alias}-`));
	for (const part of ['nodes', 'credentials', 'icons'])
		cpSync(join(root, 'dist', part), join(dir, 'package', 'dist', part), { recursive: true });
	mkdirSync(join(dir, 'node_modules'));
	symlinkSync(join(root, 'node_modules', alias), join(dir, 'node_modules', 'n8n-workflow'), 'dir');
	return dir;
}

/** Every name the compiled code takes from n8n-workflow at run time. */
function namesUsed(): string[] {
	const names = new Set<string>();
	for (const part of ['nodes', 'credentials']) {
		const dir = join(root, 'dist', part);
		for (const file of readdirSync(dir, { recursive: true }) as string[]) {
			if (!file.endsWith('.js')) continue;
			const code = readFileSync(join(dir, file), 'utf8');
			for (const [, binding] of code.matchAll(/const (\w+) = require\("n8n-workflow"\)/g))
				for (const [, name] of code.matchAll(new RegExp(`\\b${binding}\\.(\\w+)`, 'g')))
					names.add(name);
		}
	}
	return [...names].sort();
}

describe.each([OLDEST, CURRENT])(
	'the built nodes with n8n-workflow $alias',
	({ alias, version }) => {
		let dir: string;
		let load: NodeJS.Require;
		beforeAll(() => {
			dir = installBeside(alias);
			load = createRequire(join(dir, 'package', 'package.json'));
		});
		afterAll(() => rmSync(dir, { recursive: true, force: true }));

		it('resolves n8n-workflow to that version', () => {
			const workflowPkg = load('n8n-workflow/package.json') as { version: string };
			if (version) expect(workflowPkg.version).toBe(version);
			else expect(workflowPkg.version).toMatch(/^2\./);
		});

		it('has every name the compiled nodes and credential read from n8n-workflow', () => {
			const used = namesUsed();
			expect(used).toEqual(expect.arrayContaining(['NodeApiError', 'updateDisplayOptions']));
			const workflow = load('n8n-workflow') as Record<string, unknown>;
			expect(used.filter((name) => workflow[name] === undefined)).toEqual([]);
		});

		it('constructs both nodes and the credential as n8n does, main connections as strings', () => {
			const construct = (file: string) => {
				const module = load(`./${file}`) as Record<string, new () => Constructed>;
				const [Class] = Object.values(module);
				return new Class();
			};
			const [action, trigger] = pkg.n8n.nodes.map(construct);
			expect(action.description.name).toBe('payPalych');
			expect(action.description.inputs).toEqual(['main']);
			expect(action.description.outputs).toEqual(['main']);
			expect(trigger.description.name).toBe('payPalychTrigger');
			// The trigger's outputs are an expression (a second output, Refused, when Output Refused
			// Calls is on): evaluated by this n8n-workflow as n8n does when it draws the node.
			const { Workflow, NodeHelpers } = load('n8n-workflow') as {
				Workflow: new (options: unknown) => unknown;
				NodeHelpers: {
					getNodeOutputs: (workflow: unknown, node: unknown, description: unknown) => unknown;
				};
			};
			const outputsWith = (refusedOutput: boolean) => {
				const node = {
					id: '1',
					name: 'T',
					type: 'n8n-nodes-paypalych.payPalychTrigger',
					typeVersion: 2,
					position: [0, 0],
					parameters: { event: 'payment', refusedOutput },
				};
				const nodeTypes = {
					getByName: () => trigger,
					getByNameAndVersion: () => trigger,
					getKnownTypes: () => ({}),
				};
				const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
				return NodeHelpers.getNodeOutputs(workflow, node, trigger.description);
			};
			expect(outputsWith(false)).toEqual(['main']);
			expect(outputsWith(true)).toEqual([
				{ type: 'main', displayName: 'Confirmed' },
				{ type: 'main', displayName: 'Refused' },
			]);
			const [credential] = pkg.n8n.credentials.map(construct) as unknown as Array<{ name: string }>;
			expect(credential.name).toBe('payPalychApi');
		});
	},
);
