import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import {
  AnalyzeBody,
  AnalyzeResponse,
  DailyQuery,
  DailyResponse,
  ForecastQuery,
  ForecastResponse,
  SettingsBody,
  SettingsResponse,
  SummaryQuery,
  SummaryResponse,
  TenantQuery,
} from './model.ts'
import { analyze, forecast, getDaily, getSettings, getSummary, updateSettings } from './service.ts'

const doc = (summary: string) => ({ summary, tags: ['cashflow'], security: [{ bearer: [] }] })

/** The cashflow service's HTTP controller. */
export function createCashflowApp(ctx: ServiceContext) {
  return createServiceApp(ctx, {
    title: 'Cashflow',
    description: 'Cashflow health, daily series, trends and seasonality, forecasts',
  })
    .get(
      '/api/v1/cashflow/summary/:tenant_id',
      ({ params, query, actor }) => getSummary(ctx, tenantFor(actor, params.tenant_id), query),
      {
        auth: 'read',
        params: t.Object({ tenant_id: t.String() }),
        query: SummaryQuery,
        response: { 200: SummaryResponse },
        detail: doc('Cashflow health: flows, balance, burn rate, runway, health score'),
      },
    )
    .get(
      '/api/v1/cashflow/daily',
      ({ query, actor }) => getDaily(ctx, tenantFor(actor, query.tenant_id), query),
      {
        auth: 'read',
        query: DailyQuery,
        response: { 200: DailyResponse },
        detail: doc('Daily inflow, outflow and net by category, every day of the range'),
      },
    )
    .post(
      '/api/v1/cashflow/analyze',
      ({ body, actor }) => analyze(ctx, tenantFor(actor, body.tenant_id), body),
      {
        auth: 'read',
        body: AnalyzeBody,
        response: { 200: AnalyzeResponse },
        detail: doc('Trends, seasonality, category drivers and recurring payments'),
      },
    )
    .get(
      '/api/v1/cashflow/forecast',
      ({ query, actor }) => forecast(ctx, tenantFor(actor, query.tenant_id), query.horizon ?? 30),
      {
        auth: 'read',
        query: ForecastQuery,
        response: { 200: ForecastResponse },
        detail: doc('Daily net cashflow forecast with 80% and 95% intervals and its backtest'),
      },
    )
    .get(
      '/api/v1/cashflow/settings',
      ({ query, actor }) => getSettings(ctx, tenantFor(actor, query.tenant_id)),
      {
        auth: 'read',
        query: t.Object({ tenant_id: TenantQuery }),
        response: { 200: SettingsResponse },
        detail: doc('Cashflow settings (low-balance threshold)'),
      },
    )
    .put(
      '/api/v1/cashflow/settings',
      ({ body, actor }) => updateSettings(ctx, tenantFor(actor, body.tenant_id), body),
      {
        auth: 'admin',
        body: SettingsBody,
        response: { 200: SettingsResponse },
        detail: doc('Set the low-balance threshold (null turns the alert off)'),
      },
    )
}
