// Charts of an endpoint's health, drawn on the server as inline SVG (no script): attempts per hour
// stacked by outcome, and the latency percentiles per hour as two lines. Pure functions from the
// figures to markup. Each chart is one image to assistive technology (`role="img"`) named by a
// title and described by a sentence with the figures that matter; the colours come with a legend
// that names them, and the two latency lines differ by dash as well as colour. The drawing scales
// to its box (a viewBox, width 100%), so it fits a 375 px screen.
import type { AttemptOutcomeKind } from '../../domain/endpoint-health.ts';
import { OUTCOME_KINDS, OUTCOME_LABELS } from '../../domain/endpoint-health.ts';
import { html, type SafeHtml } from './html.ts';

/** One hour of figures, as the service gives them. */
export interface ChartHour extends Record<AttemptOutcomeKind, number> {
  /** ISO 8601 start of the hour (UTC). */
  hour: string;
  attempts: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

/** Fill of each outcome: distinct in hue and lightness, each at least 3:1 against white. */
export const OUTCOME_COLOURS: Record<AttemptOutcomeKind, string> = {
  delivered: '#1a7f37',
  failed: '#b35806',
  no_answer: '#6a3d9a',
  not_sent: '#5f6368',
};
const P50_COLOUR = '#0b5cad';
const P99_COLOUR = '#a1261a';

const W = 320;
const H = 180;
const PAD = { left: 48, right: 8, top: 18, bottom: 24 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;
const round = (n: number) => Math.round(n * 100) / 100;

/** "Nov 26 14:00 UTC". */
export function hourLabel(iso: string): string {
  const d = new Date(iso);
  const month = d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  return `${month} ${d.getUTCDate()} ${String(d.getUTCHours()).padStart(2, '0')}:00 UTC`;
}

/** "800 ms", "1.6 s". */
export function msLabel(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** The smallest of 1, 2, 5 × 10^k at or above `n` (at least 1). */
export function niceMax(n: number): number {
  if (n <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

/** Labels under the x axis: at most 7, on UTC midnights when the window spans days. */
function xLabels(hours: readonly ChartHour[], x: (i: number) => number): SafeHtml[] {
  const every = Math.max(1, Math.ceil(hours.length / 7));
  const days = hours.length > 24;
  const out: SafeHtml[] = [];
  hours.forEach((h, i) => {
    const d = new Date(h.hour);
    const show = days ? d.getUTCHours() === 0 : i % every === 0;
    if (!show) return;
    const text = days
      ? `${d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' })} ${d.getUTCDate()}`
      : `${String(d.getUTCHours()).padStart(2, '0')}:00`;
    out.push(
      html`<line x1="${round(x(i))}" x2="${round(x(i))}" y1="${PAD.top + PLOT_H}" y2="${PAD.top + PLOT_H + 3}" stroke="#4a4a4a"/><text \
x="${round(x(i))}" y="${H - 8}" text-anchor="middle">${text}</text>`,
    );
  });
  return out;
}

/** The chart's frame; `axis` names what the y axis counts (the x axis is always UTC hours, days labelled). */
function frame(id: string, title: string, description: string, axis: string, body: SafeHtml): SafeHtml {
  return html`<svg class="chart" role="img" aria-labelledby="${id}-title ${id}-desc" viewBox="0 0 ${W} ${H}" width="100%" \
preserveAspectRatio="xMidYMid meet" font-size="10" font-family="system-ui, sans-serif" fill="#1a1a1a">
<title id="${id}-title">${title}</title>
<desc id="${id}-desc">${description}</desc>
<text x="${PAD.left}" y="11" fill="#4a4a4a">${axis}</text><text x="${PAD.left + PLOT_W}" y="11" text-anchor="end" fill="#4a4a4a">UTC</text>
${body}
<line x1="${PAD.left}" x2="${PAD.left + PLOT_W}" y1="${PAD.top + PLOT_H}" y2="${PAD.top + PLOT_H}" stroke="#4a4a4a"/>
<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + PLOT_H}" stroke="#4a4a4a"/>
</svg>`;
}

function legend(items: { label: string; swatch: SafeHtml }[]): SafeHtml {
  return html`<ul class="chart-legend">${items.map((i) => html`<li>${i.swatch}${i.label}</li>`)}</ul>`;
}

function boxSwatch(colour: string): SafeHtml {
  return html`<svg width="14" height="14" aria-hidden="true" focusable="false"><rect width="14" height="14" fill="${colour}"/></svg>`;
}

function lineSwatch(colour: string, dash: string | undefined): SafeHtml {
  return html`<svg width="24" height="14" aria-hidden="true" focusable="false"><line x1="1" x2="23" y1="7" y2="7" stroke="${colour}" \
stroke-width="2.5"${dash ? html` stroke-dasharray="${dash}"` : ''}/></svg>`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** "3 delivered", "1 failed answer", "2 with no answer", "0 not sent". */
export function countWords(kind: AttemptOutcomeKind, n: number): string {
  switch (kind) {
    case 'delivered':
      return `${n} delivered`;
    case 'failed':
      return plural(n, 'failed answer');
    case 'no_answer':
      return `${n} with no answer`;
    case 'not_sent':
      return `${n} not sent`;
  }
}

/**
 * Attempts per hour, stacked by outcome (delivered at the bottom), with the y axis from 0 to a
 * round number at or above the busiest hour. `id` makes the chart's element ids unique on its page.
 */
export function attemptsChart(id: string, endpoint: string, hours: readonly ChartHour[]): SafeHtml {
  const totals = Object.fromEntries(OUTCOME_KINDS.map((k) => [k, hours.reduce((n, h) => n + h[k], 0)])) as Record<
    AttemptOutcomeKind,
    number
  >;
  const all = hours.reduce((n, h) => n + h.attempts, 0);
  if (all === 0) return html`<p class="muted">No attempts to ${endpoint} in this window.</p>`;
  const busiest = hours.reduce((b, h) => (h.attempts > b.attempts ? h : b), hours[0]!);
  const max = niceMax(busiest.attempts);
  const slot = PLOT_W / hours.length;
  const x = (i: number) => PAD.left + i * slot + slot / 2;
  const y = (v: number) => PAD.top + PLOT_H - (v / max) * PLOT_H;
  const bars = hours.map((h, i) => {
    if (h.attempts === 0) return '';
    let base = 0;
    const parts = OUTCOME_KINDS.filter((k) => h[k] > 0).map((k) => {
      const top = base + h[k];
      const rect = html`<rect class="bar-${k}" x="${round(PAD.left + i * slot + slot * 0.1)}" width="${round(slot * 0.8)}" \
y="${round(y(top))}" height="${round(y(base) - y(top))}" fill="${OUTCOME_COLOURS[k]}"/>`;
      base = top;
      return rect;
    });
    const words = OUTCOME_KINDS.filter((k) => h[k] > 0).map((k) => countWords(k, h[k]));
    return html`<g><title>${hourLabel(h.hour)}: ${words.join(', ')}</title>${parts}</g>`;
  });
  const ticks = (Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max]).map(
    (v) =>
      html`<line x1="${PAD.left - 3}" x2="${PAD.left + PLOT_W}" y1="${round(y(v))}" y2="${round(y(v))}" stroke="#d0d4d9" \
stroke-width="0.5"/><text x="${PAD.left - 5}" y="${round(y(v) + 3)}" text-anchor="end">${String(v)}</text>`,
  );
  const summary =
    `${plural(all, 'attempt')} in ${plural(hours.length, 'hour')}: ${OUTCOME_KINDS.map((k) => countWords(k, totals[k])).join(', ')}. ` +
    `The busiest hour, ${hourLabel(busiest.hour)}, had ${plural(busiest.attempts, 'attempt')}.`;
  return html`<figure class="chart-figure">
${frame(id, `Attempts per hour to ${endpoint}, by outcome`, summary, 'Attempts per hour', html`${ticks}${xLabels(hours, x)}${bars}`)}
<figcaption>${legend(OUTCOME_KINDS.map((k) => ({ label: OUTCOME_LABELS[k], swatch: boxSwatch(OUTCOME_COLOURS[k]) })))}</figcaption>
</figure>`;
}

/** Latency bounds of the y axis (log scale): the histogram's buckets, every other one labelled. */
const LATENCY_TICKS = [25, 100, 400, 1600, 6400, 25600];
const LATENCY_TOP = 60000;

/**
 * The estimated p50 and p99 latency of each hour's answers, on a log scale from 25 ms to 60 s
 * (the histogram's range); an hour without answers leaves a gap in the lines.
 */
export function latencyChart(
  id: string,
  endpoint: string,
  hours: readonly ChartHour[],
  overall: { p50_ms: number | null; p99_ms: number | null },
): SafeHtml {
  if (overall.p50_ms === null || overall.p99_ms === null)
    return html`<p class="muted">No answers from ${endpoint} in this window, so no latency to show.</p>`;
  const slot = PLOT_W / hours.length;
  const x = (i: number) => PAD.left + i * slot + slot / 2;
  const span = Math.log(LATENCY_TOP / LATENCY_TICKS[0]!);
  const y = (ms: number) => PAD.top + PLOT_H - (Math.log(Math.max(ms, LATENCY_TICKS[0]!) / LATENCY_TICKS[0]!) / span) * PLOT_H;
  const line = (key: 'p50_ms' | 'p99_ms', colour: string, dash: string | undefined) => {
    // Consecutive hours with a value make one segment; a gap starts another.
    const segments: string[][] = [];
    let current: string[] | undefined;
    hours.forEach((h, i) => {
      const v = h[key];
      if (v === null) {
        current = undefined;
        return;
      }
      if (!current) segments.push((current = []));
      current.push(`${round(x(i))},${round(y(v))}`);
    });
    const dots = hours.flatMap((h, i) =>
      h[key] === null ? [] : [html`<circle cx="${round(x(i))}" cy="${round(y(h[key]!))}" r="1.6" fill="${colour}"/>`],
    );
    return html`<g class="line-${key}">${segments.map(
      (s) =>
        html`<polyline points="${s.join(
          ' ',
        )}" fill="none" stroke="${colour}" stroke-width="1.5"${dash ? html` stroke-dasharray="${dash}"` : ''}/>`,
    )}${dots}</g>`;
  };
  const ticks = LATENCY_TICKS.map(
    (v) =>
      html`<line x1="${PAD.left - 3}" x2="${PAD.left + PLOT_W}" y1="${round(y(v))}" y2="${round(y(v))}" stroke="#d0d4d9" \
stroke-width="0.5"/><text x="${PAD.left - 5}" y="${round(y(v) + 3)}" text-anchor="end">${msLabel(v)}</text>`,
  );
  const worst = hours.reduce<ChartHour | undefined>((w, h) => (h.p99_ms !== null && (!w || h.p99_ms > (w.p99_ms ?? 0)) ? h : w), undefined);
  const summary = `Over the window, p50 at most ${msLabel(overall.p50_ms)} and p99 at most ${msLabel(overall.p99_ms)}.${
    worst ? ` The slowest hour, ${hourLabel(worst.hour)}, had p99 at most ${msLabel(worst.p99_ms!)}.` : ''
  }`;
  return html`<figure class="chart-figure">
${frame(
  id,
  `Latency of answers from ${endpoint} per hour, p50 and p99`,
  summary,
  'Latency (log scale)',
  html`${ticks}${xLabels(hours, x)}${line('p50_ms', P50_COLOUR, undefined)}${line('p99_ms', P99_COLOUR, '4 2')}`,
)}
<figcaption>${legend([
    { label: 'p50 (solid)', swatch: lineSwatch(P50_COLOUR, undefined) },
    { label: 'p99 (dashed)', swatch: lineSwatch(P99_COLOUR, '4 2') },
  ])}</figcaption>
</figure>`;
}
