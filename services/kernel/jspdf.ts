import type { jsPDF as Document } from 'jspdf'

type JsPdfClass = typeof import('jspdf').jsPDF

let loaded: JsPdfClass | undefined

/** jspdf itself, loaded the first time a PDF is made. */
function load(): JsPdfClass {
  // A synchronous require, so the PDF functions stay synchronous; Bun resolves jspdf's node build.
  loaded ??= (require('jspdf') as typeof import('jspdf')).jsPDF
  return loaded
}

/**
 * jspdf's `jsPDF`, loaded on first use instead of at start: the library costs each worker 30 to
 * 130 ms of start-up (bench/startup.ts) for a PDF few requests ask for. Used exactly like the
 * library's class.
 *
 * @example
 * import { jsPDF } from '../kernel/jspdf.ts'
 * const doc = new jsPDF({ unit: 'mm', format: 'a4' })
 */
export const jsPDF: JsPdfClass = new Proxy(function jsPDF() {} as unknown as JsPdfClass, {
  construct: (_target, args) => new (load())(...(args as ConstructorParameters<JsPdfClass>)),
  get: (_target, key) => Reflect.get(load(), key),
})
export type jsPDF = Document
