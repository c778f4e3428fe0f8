/**
 * A thread made from a source string for one job: it gets the job as its one message, answers
 * with one message (`{ error }` when it failed) and is ended. Made from a string, as the
 * checkpointer is, so the single executable needs no file of its own for it.
 *
 * @example
 * const copy = oneShotWorker<{ tables: CopiedTable[] }>(source, 'the copy thread')
 * const { tables } = await copy(job)
 */
export function oneShotWorker<T>(source: string, what: string): (job: unknown) => Promise<T> {
  let url: string | null = null
  return (job) => {
    url ??= URL.createObjectURL(new Blob([source], { type: 'application/javascript' }))
    const worker = new Worker(url)
    return new Promise<T>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<T & { error?: string }>) => {
        worker.terminate()
        if (e.data && e.data.error === undefined) resolve(e.data)
        else reject(new Error(e.data?.error ?? `${what} answered nothing`))
      }
      worker.onerror = (e) => {
        worker.terminate()
        reject(new Error(`${what} failed: ${e.message}`))
      }
      worker.postMessage(job)
    })
  }
}
