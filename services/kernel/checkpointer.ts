/**
 * WAL checkpoints on a thread of their own, off the thread that commits (tenants/checkpointer.ts:
 * the storage layer owns the databases, and a tenant move uses it too). Services reach it here.
 *
 * @example
 * const checkpointer = startCheckpointer(db, { name: 'the webhook queue', log: ctx.log })
 * checkpointer.handOver() // before each write of a loop that never lets the event loop turn
 * await checkpointer.stop()
 */
export * from '../../tenants/checkpointer.ts'
