/**
 * The wire contract of the PayPalych service: signature rules, postback fields, statuses, the
 * error catalogue, money and date formats. Pure functions without dependencies, shared by the
 * action node, the trigger node and the relay (which imports the compiled copy).
 */
export * from './confirm';
export * from './dates';
export * from './endpoints';
export * from './errors';
export * from './headers';
export * from './money';
export * from './pagination';
export * from './postback';
export * from './signature';
export * from './statuses';
