import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * n8n-core reads its settings folder when its services start: point it at one fixed folder under
 * the temporary directory (not the home directory, and not a new one per run).
 */
export function useN8nSettingsFolder(name: string): void {
	if (process.env.N8N_USER_FOLDER === undefined) {
		process.env.N8N_USER_FOLDER = join(tmpdir(), name);
		mkdirSync(process.env.N8N_USER_FOLDER, { recursive: true });
	}
	process.env.N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS ??= 'false';
}

/**
 * `require` for n8n's packages: the compiled nodes load n8n-workflow's CommonJS build, so the
 * harnesses must load the same copies (one NodeOperationError, one Workflow class).
 */
export const requireN8n = createRequire(__filename);
