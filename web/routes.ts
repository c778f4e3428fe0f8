import dashboard from './index.html'

/**
 * The dashboard, bundled by Bun from index.html (TypeScript, CSS, uPlot) when the gateway
 * starts, and embedded in `dist/mmp` by `bun build --compile`.
 */
export const dashboardRoutes = { '/': dashboard }
