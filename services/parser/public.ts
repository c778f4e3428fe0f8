/**
 * What the parser offers outside the service (the CLI): the synthetic demo history and the shape
 * of a statement import's answer. Commands
 * import this module, never the service's internals.
 */
export { fitDemo } from './demo.ts'
export type { StatementAnswer } from './model.ts'
