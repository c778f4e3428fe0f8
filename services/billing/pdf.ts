import { jsPDF } from '../kernel/jspdf.ts'
import type { Invoice } from './model.ts'

const money = (n: number, currency: string) =>
  `${currency} ${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
const date = (s: string | null) => (s ? s.slice(0, 10) : '-')

/**
 * An invoice as an A4 PDF: seller block, bill-to (tenant), number and dates, a line table with
 * quantity, unit price and amount, then subtotal and total, and the payment status.
 */
export function renderInvoicePdf(
  inv: Invoice,
  seller: { name: string; address: string[] },
  tenantName: string,
): ArrayBuffer {
  const doc = new jsPDF({ unit: 'mm', format: 'a4' })
  doc.setProperties({ title: `Invoice ${inv.number}`, subject: `Invoice ${inv.number}` })
  const left = 20
  const right = 190
  doc.setFont('helvetica', 'bold').setFontSize(20).text('INVOICE', left, 25)
  doc.setFontSize(11).text(seller.name, right, 20, { align: 'right' })
  doc.setFont('helvetica', 'normal').setFontSize(9)
  seller.address.forEach((l, i) => {
    doc.text(l, right, 25 + i * 4.5, { align: 'right' })
  })

  let y = 45
  doc.setFont('helvetica', 'bold').setFontSize(10).text('Bill to', left, y)
  doc.setFont('helvetica', 'normal').text(tenantName, left, y + 5)
  doc.text(`Tenant ID: ${inv.tenant_id}`, left, y + 10)
  doc
    .setFontSize(7)
    .setTextColor(110)
    .text(`Invoice ID: ${inv.id}`, left, y + 15)
  doc.setFontSize(10).setTextColor(0)
  const meta: Array<[string, string]> = [
    ['Invoice number', inv.number],
    ['Issue date', date(inv.issued_at)],
    ['Due date', date(inv.due_at)],
    ['Billing period', `${date(inv.period_start)} to ${date(inv.period_end)}`],
    ['Status', inv.status.toUpperCase()],
  ]
  meta.forEach(([k, v], i) => {
    doc.setFont('helvetica', 'bold').text(`${k}:`, 120, y + i * 5)
    doc.setFont('helvetica', 'normal').text(v, right, y + i * 5, { align: 'right' })
  })

  y = 85
  doc.setFillColor(235, 235, 235).rect(left, y - 5, right - left, 7, 'F')
  doc.setFont('helvetica', 'bold')
  doc.text('Description', left + 2, y)
  doc.text('Qty', 130, y, { align: 'right' })
  doc.text('Unit price', 158, y, { align: 'right' })
  doc.text('Amount', right - 2, y, { align: 'right' })
  doc.setFont('helvetica', 'normal')
  y += 8
  for (const line of inv.lines) {
    const wrapped = doc.splitTextToSize(line.description, 100) as string[]
    doc.text(wrapped, left + 2, y)
    doc.text(String(line.quantity), 130, y, { align: 'right' })
    doc.text(money(line.unit_amount, inv.currency), 158, y, { align: 'right' })
    doc.text(money(line.amount, inv.currency), right - 2, y, { align: 'right' })
    y += 5 * wrapped.length + 2
    if (y > 260) {
      doc.addPage()
      y = 25
    }
  }
  doc.setDrawColor(150).line(120, y, right, y)
  y += 6
  doc.text('Subtotal', 150, y, { align: 'right' })
  doc.text(money(inv.subtotal, inv.currency), right - 2, y, { align: 'right' })
  y += 6
  doc.setFont('helvetica', 'bold').text('Total due', 150, y, { align: 'right' })
  doc.text(money(inv.total, inv.currency), right - 2, y, { align: 'right' })
  y += 12
  doc.setFont('helvetica', 'normal').setFontSize(9)
  doc.text(
    inv.status === 'paid'
      ? `Paid on ${date(inv.paid_at)}. Thank you.`
      : `Pay by M-Pesa before ${date(inv.due_at)} with account reference ${inv.number}.`,
    left,
    y,
  )
  return doc.output('arraybuffer')
}
