/**
 * Kernel errors: business logic throws these and never an HTTP status. They are declared with the
 * other contracts in schema/errors.ts (problem codes are part of the API); this is the kernel's
 * door to them.
 */
export * from '../../schema/errors.ts'
