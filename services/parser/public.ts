/**
 * What the parser offers outside the service (the CLI): the synthetic demo history. Commands
 * import this module, never the service's internals.
 */
export { fitDemo } from './demo.ts'
