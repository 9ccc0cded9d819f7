/**
 * The wire contract of the PayPalych service: signature rules, postback fields, statuses, the
 * error catalogue, money and date formats. Pure functions without dependencies, shared by the
 * action node, the trigger node and the relay. The relay imports this source (through
 * relay/src/contract.ts) and compiles it with its own code into relay/dist; it never imports the
 * community package's build.
 */
export * from './body';
export * from './confirm';
export * from './dates';
export * from './endpoints';
export * from './errors';
export * from './headers';
export * from './kinds';
export * from './money';
export * from './money-back';
export * from './pagination';
export * from './postback';
export * from './signature';
export * from './statement';
export * from './statement-totals';
export * from './statuses';
