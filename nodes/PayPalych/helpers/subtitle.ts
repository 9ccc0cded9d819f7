import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

/**
 * The canvas subtitle of the action node: the chosen operation's action name, as the nodes panel
 * shows it ("Create a bill", "Get the balance"), read from every Operation field of `properties`
 * (one per resource), so a new resource gets its names without a change here. A pair the table
 * does not know (a parameter set by an expression) shows the operation's own value.
 */
export function actionSubtitle(properties: INodeProperties[]): string {
	const names: Record<string, string> = {};
	for (const property of properties) {
		if (property.name !== 'operation' || property.type !== 'options') continue;
		const resources = (property.displayOptions?.show?.resource ?? []) as string[];
		for (const option of (property.options ?? []) as INodePropertyOptions[]) {
			const name = typeof option.action === 'string' ? option.action : option.name;
			for (const resource of resources) names[`${resource}:${String(option.value)}`] = name;
		}
	}
	// No "}}" may appear inside the expression: the table is one flat object.
	return `={{ ${JSON.stringify(names)}[$parameter["resource"] + ":" + $parameter["operation"]] || $parameter["operation"] }}`;
}
