export { inbox, outbox } from '../kernel.ts'
