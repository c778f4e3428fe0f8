/**
 * What the parser offers outside the service (the CLI): reading a statement file (CSV or PDF) the
 * way an upload is read, and the synthetic demo history. Commands import this module, never the
 * service's internals.
 */
export { fitDemo, generateDemo } from './demo.ts'
export { statementAnswer } from './proof-answer.ts'
export { readStatement } from './read-statement.ts'
export { isPdf } from './statement-pdf.ts'
