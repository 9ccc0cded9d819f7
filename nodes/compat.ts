import type { NodeConnectionType } from 'n8n-workflow';

/**
 * What the nodes take from n8n-workflow at run time must exist in every n8n they support
 * (docs/merchant/install.md, *Versions*). n8n-workflow exports `NodeConnectionTypes` only from
 * n8n 1.85 (n8n-workflow 1.83): importing it would keep both nodes from loading on older n8n 1.x
 * (`Cannot read properties of undefined (reading 'Main')` when n8n constructs the node). The main
 * connection is the string every n8n version stores, typed as n8n's connection type here.
 * test/node/n8n-workflow-compat.test.ts loads the built nodes against the oldest n8n-workflow
 * supported.
 */
export const MAIN_CONNECTION: NodeConnectionType = 'main';
