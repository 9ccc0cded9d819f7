/**
 * Request validation with zod, answered the Laravel way: 422 with `message` and an `errors`
 * object keyed by field. Empty strings count as absent (Laravel turns them into null); unknown
 * fields are ignored.
 */
import { z } from 'zod';
import { validationError } from './errors.ts';
import { parseSearchDate } from './dates.ts';
import { isNumeric } from './money.ts';

export type Input = Record<string, unknown>;

/** The request input as a plain object: a non-object body counts as no fields at all. */
export function toInput(raw: unknown): Input {
	const input: Input = {};
	if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return input;
	for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
		if (value === '' || value === null || value === undefined) continue;
		input[key] = value;
	}
	return input;
}

const attribute = (field: string) => field.replace(/_/g, ' ');

export const rules = {
	string: (max = 255) =>
		z
			.string({ error: 'The :attribute field must be a string.' })
			.max(max, { error: `The :attribute field must not be greater than ${max} characters.` }),
	numeric: () =>
		z
			.union([z.string(), z.number()], { error: 'The :attribute field must be a number.' })
			.transform((value) => String(value))
			.refine((value) => isNumeric(value), { error: 'The :attribute field must be a number.' }),
	oneOf: <T extends string>(values: readonly T[]) =>
		z
			.union([z.string(), z.number()], { error: 'The selected :attribute is invalid.' })
			.transform((value) => String(value))
			.refine((value): value is T => (values as readonly string[]).includes(value), {
				error: 'The selected :attribute is invalid.',
			})
			.transform((value) => value as T),
	boolean: () =>
		z
			.union([z.boolean(), z.string(), z.number()], {
				error: 'The :attribute field must be true or false.',
			})
			.refine((value) => [true, false, 0, 1, '0', '1', 'true', 'false'].includes(value), {
				error: 'The :attribute field must be true or false.',
			})
			.transform((value) => value === true || value === 1 || value === '1' || value === 'true'),
	integer: () =>
		z
			.union([z.string(), z.number()], { error: 'The :attribute field must be an integer.' })
			.refine(
				(value) =>
					typeof value === 'number' ? Number.isSafeInteger(value) : /^-?\d{1,15}$/.test(value),
				{
					error: 'The :attribute field must be an integer.',
				},
			)
			.transform((value) => Number(value)),
	/** A search date: `Y-m-d`, or a date-time (`Y-m-d H:i:s`, ISO 8601); see parseSearchDate. */
	date: () =>
		z
			.string({ error: 'The :attribute field must be a valid date.' })
			.max(40, { error: 'The :attribute field must be a valid date.' })
			.refine((value) => parseSearchDate(value) !== null, {
				error: 'The :attribute field must be a valid date.',
			}),
};

/**
 * Parses the input or throws the 422 answer. `extra` adds rules that depend on other fields
 * (required_if and the like); it sees the raw input and runs even when other fields fail, as
 * Laravel evaluates every rule.
 */
export function validate<S extends z.ZodType>(
	schema: S,
	input: Input,
	extra?: (input: Input) => Record<string, string>,
): z.output<S> {
	const result = schema.safeParse(input);
	const more = extra ? extra(input) : {};
	if (result.success && Object.keys(more).length === 0) return result.data;
	const found: Record<string, string> = {};
	for (const issue of result.success ? [] : result.error.issues) {
		const field = String(issue.path[0] ?? 'input');
		if (found[field] !== undefined) continue;
		const missing = input[field] === undefined && issue.code === 'invalid_type';
		found[field] = missing ? 'The :attribute field is required.' : issue.message;
	}
	for (const [field, message] of Object.entries(more)) found[field] ??= message;
	const order = Object.keys((schema as unknown as { shape?: Record<string, unknown> }).shape ?? {});
	const fields = [
		...order.filter((field) => field in found),
		...Object.keys(found).filter((field) => !order.includes(field)),
	];
	const errors: Record<string, string[]> = {};
	for (const field of fields)
		errors[field] = [(found[field] as string).replace(/:attribute/g, attribute(field))];
	throw validationError(errors);
}

/** A 422 for one field with a ready message. */
export function fieldError(field: string, message: string) {
	return validationError({ [field]: [message.replace(/:attribute/g, attribute(field))] });
}
