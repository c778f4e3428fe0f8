import { AppError } from '../kernel/errors.ts'

/** Where a flag's effective value comes from, outermost first. */
export type FeatureLayer = 'plan' | 'operator' | 'tenant'

/**
 * A tenant's feature switches in three layers: the plan's defaults, the operator's overrides (a
 * grant beyond the plan or a restriction), and the tenant's own toggles, which act only inside what
 * the plan and the operator allow: a tenant can switch a feature off and back on, never past the
 * layers above it. Stored as `{"operator": {...}, "tenant": {...}}` in `feature_overrides`.
 */
export interface FeatureLayers {
  operator: Record<string, boolean>
  tenant: Record<string, boolean>
}

const booleansOf = (v: unknown): Record<string, boolean> =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? (Object.fromEntries(
        Object.entries(v as Record<string, unknown>).filter(([, b]) => typeof b === 'boolean'),
      ) as Record<string, boolean>)
    : {}

/**
 * The layers stored on a tenant row. A flat object (one layer, from before the operator's had one
 * of its own) is read as the operator's: who set each flag is not known, and a switch the tenant
 * cannot lift is the safe reading.
 */
export function parseLayers(stored: string | null | undefined): FeatureLayers {
  let parsed: unknown = {}
  try {
    parsed = stored ? JSON.parse(stored) : {}
  } catch {}
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return { operator: {}, tenant: {} }
  const o = parsed as Record<string, unknown>
  if ('operator' in o || 'tenant' in o)
    return { operator: booleansOf(o.operator), tenant: booleansOf(o.tenant) }
  return { operator: booleansOf(o), tenant: {} }
}

export const storeLayers = (layers: FeatureLayers): string => JSON.stringify(layers)

/**
 * Each flag's effective value and the layer that holds it: the operator's value (else the plan's)
 * is the ceiling; the tenant's own `false` switches a feature off under it, and its `true` counts
 * only where the ceiling allows it.
 *
 * @example
 * resolveFeatures({ api_access: true }, { operator: { api_access: false }, tenant: { api_access: true } })
 * // { features: { api_access: false }, held_by: { api_access: 'operator' } }
 */
export function resolveFeatures(defaults: Record<string, boolean>, layers: FeatureLayers) {
  const features: Record<string, boolean> = {}
  const heldBy: Record<string, FeatureLayer> = {}
  const flags = new Set([
    ...Object.keys(defaults),
    ...Object.keys(layers.operator),
    ...Object.keys(layers.tenant),
  ])
  for (const k of flags) {
    const byOperator = layers.operator[k]
    const ceiling = byOperator ?? defaults[k] ?? false
    const ceilingLayer: FeatureLayer = byOperator === undefined ? 'plan' : 'operator'
    const own = layers.tenant[k]
    if (ceiling && own === false) {
      features[k] = false
      heldBy[k] = 'tenant'
    } else {
      features[k] = ceiling
      heldBy[k] = ceilingLayer
    }
  }
  return { features, held_by: heldBy }
}

/**
 * Applies a change of switches to the layers: the operator's go to the operator's layer (a value
 * equal to the plan's default, or null, removes it); a tenant's go to its own layer and may not
 * switch on what the plan or the operator keeps off (402 FEATURE_DISABLED naming that layer).
 */
export function applyFeatureChange(opts: {
  defaults: Record<string, boolean>
  layers: FeatureLayers
  change: Record<string, boolean | null>
  byOperator: boolean
  plan: string
}): FeatureLayers {
  const operator = { ...opts.layers.operator }
  const tenant = { ...opts.layers.tenant }
  for (const [k, v] of Object.entries(opts.change)) {
    if (opts.byOperator) {
      if (v === null || opts.defaults[k] === v) delete operator[k]
      else operator[k] = v
      continue
    }
    const ceiling = operator[k] ?? opts.defaults[k] ?? false
    if (v === true && !ceiling)
      throw featureHeld(k, operator[k] === false ? 'operator' : 'plan', opts.plan)
    if (v === false) tenant[k] = false
    else delete tenant[k]
  }
  return { operator, tenant }
}

function featureHeld(flag: string, layer: 'operator' | 'plan', plan: string): AppError {
  const detail =
    layer === 'operator'
      ? `${flag} is switched off by the platform operator; ask the operator to switch it on`
      : `the ${plan} plan does not include ${flag}; upgrade the plan or ask the operator`
  return new AppError('FEATURE_DISABLED', detail, {
    extra: { feature: flag, plan, held_by: layer },
  })
}
