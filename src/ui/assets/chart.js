// MusterChart: the SVG charts of muster's dashboard and of `muster simulate --report`
// (the report embeds this file as it is, with its data as JSON): step and line series
// over time with axes, "nice" ticks, a legend and a hover read-out, and an event
// timeline with one lane per queue. No dependencies; the same data draws the same chart.
'use strict';

(function (root) {
  const SVG = 'http://www.w3.org/2000/svg';
  const PALETTE = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#dc2626', '#0891b2', '#ca8a04',
    '#db2777', '#4b5563', '#65a30d'];

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, str, attrs) {
    const t = el('text', Object.assign({ x, y }, attrs || {}), parent);
    t.textContent = str;
    return t;
  }

  // ---- ticks ----

  function niceStep(range, target) {
    const raw = range / Math.max(1, target);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }
  const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
    21600, 43200, 86400, 172800, 604800, 2592000];
  function timeStep(range, target) {
    const raw = range / Math.max(1, target);
    for (const s of TIME_STEPS) if (s >= raw) return s;
    return niceStep(range, target);
  }
  function ticks(min, max, step) {
    const out = [];
    const first = Math.ceil(min / step - 1e-9) * step;
    for (let v = first; v <= max + step * 1e-9 && out.length < 200; v += step) out.push(+v.toFixed(9));
    return out;
  }
  function pad2(n) {
    return (n < 10 ? '0' : '') + n;
  }
  function formatDuration(s, step) {
    if (step >= 86400) return +(s / 86400).toFixed(1) + 'd';
    if (step >= 3600) return +(s / 3600).toFixed(1) + 'h';
    if (step >= 60) return +(s / 60).toFixed(1) + 'm';
    return +s.toFixed(1) + 's';
  }
  function formatClock(s, step) {
    const d = new Date(s * 1000);
    const hm = pad2(d.getHours()) + ':' + pad2(d.getMinutes());
    if (step >= 86400) return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate());
    return step < 60 ? hm + ':' + pad2(d.getSeconds()) : hm;
  }
  function formatNumber(v) {
    const a = Math.abs(v);
    if (a >= 1e6) return +(v / 1e6).toFixed(2) + 'M';
    if (a >= 1e4) return +(v / 1e3).toFixed(1) + 'k';
    return String(+v.toFixed(3));
  }
  function xFormatter(kind) {
    if (kind === 'clock') return formatClock;
    if (kind === 'duration') return formatDuration;
    return (v) => formatNumber(v);
  }

  // Value of a series at x: the last point at or before x for a step series; linear
  // interpolation otherwise. null outside the series.
  function valueAt(series, x) {
    const p = series.points;
    if (!p.length || x < p[0][0]) return null;
    let lo = 0;
    let hi = p.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (p[mid][0] <= x) lo = mid;
      else hi = mid - 1;
    }
    if (series.step || lo === p.length - 1) return p[lo][1];
    const [x0, y0] = p[lo];
    const [x1, y1] = p[lo + 1];
    return x1 === x0 ? y1 : y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
  }

  function frame(container, spec, height) {
    container.classList.add('mchart');
    while (container.firstChild) container.removeChild(container.firstChild);
    const width = Math.max(320, Math.floor(spec.width || container.clientWidth || 720));
    const svg = el('svg', {
      viewBox: `0 0 ${width} ${height}`, width, height, class: 'mchart-svg', role: 'img',
      'aria-label': spec.title || 'chart',
    }, container);
    return { svg, width };
  }

  function legend(container, series) {
    const box = document.createElement('div');
    box.className = 'mchart-legend';
    for (const s of series) {
      if (s.legend === false) continue;
      const item = document.createElement('span');
      const sw = document.createElement('i');
      sw.style.background = s.color;
      if (s.dashed) sw.className = 'dashed';
      item.appendChild(sw);
      item.appendChild(document.createTextNode(s.name));
      box.appendChild(item);
    }
    container.appendChild(box);
  }

  // spec: {title, xLabel, yLabel, x: 'clock'|'duration'|'number', xMin, xMax, yMin, yMax,
  //        yFormat(v), height, series: [{name, color, points: [[x, y]...], step, dashed, area}]}
  function line(container, spec) {
    const height = spec.height || 260;
    const { svg, width } = frame(container, spec, height);
    const m = { l: 56, r: 16, t: spec.title ? 28 : 12, b: 40 };
    const series = (spec.series || []).map((s, i) => Object.assign({ step: true }, s, {
      color: s.color || PALETTE[i % PALETTE.length], points: s.points || [] }));
    let xMin = spec.xMin;
    let xMax = spec.xMax;
    let yMax = spec.yMax;
    const yMin = spec.yMin !== undefined ? spec.yMin : 0;
    for (const s of series) {
      for (const [x, y] of s.points) {
        if (spec.xMin === undefined) xMin = xMin === undefined ? x : Math.min(xMin, x);
        if (spec.xMax === undefined) xMax = xMax === undefined ? x : Math.max(xMax, x);
        if (spec.yMax === undefined) yMax = yMax === undefined ? y : Math.max(yMax, y);
      }
    }
    if (xMin === undefined) {
      xMin = 0;
      xMax = 1;
    }
    if (xMax <= xMin) xMax = xMin + 1;
    if (yMax === undefined || yMax <= yMin) yMax = yMin + 1;
    const yStep = niceStep(yMax - yMin, 5);
    if (spec.yMax === undefined) yMax = Math.ceil(yMax / yStep) * yStep;
    const pw = width - m.l - m.r;
    const ph = height - m.t - m.b;
    const sx = (x) => m.l + ((x - xMin) / (xMax - xMin)) * pw;
    const sy = (y) => m.t + ph - ((y - yMin) / (yMax - yMin)) * ph;
    const fx = xFormatter(spec.x);
    const fy = spec.yFormat || (spec.yPercent ? (v) => +(v * 100).toFixed(1) + '%' : formatNumber);

    if (spec.title) text(svg, m.l, 18, spec.title, { class: 'mchart-title' });
    const grid = el('g', { class: 'mchart-grid' }, svg);
    for (const v of ticks(yMin, yMax, yStep)) {
      el('line', { x1: m.l, x2: m.l + pw, y1: sy(v), y2: sy(v) }, grid);
      text(grid, m.l - 6, sy(v) + 4, fy(v), { 'text-anchor': 'end' });
    }
    const xStep = spec.x === 'clock' || spec.x === 'duration'
      ? timeStep(xMax - xMin, Math.max(2, Math.floor(pw / 90)))
      : niceStep(xMax - xMin, Math.max(2, Math.floor(pw / 90)));
    let xTicks = ticks(xMin, xMax, xStep);
    if (spec.x === 'clock') {
      // Ticks on local wall-clock boundaries.
      const offset = new Date(xMin * 1000).getTimezoneOffset() * 60;
      xTicks = ticks(xMin - offset, xMax - offset, xStep).map((v) => v + offset);
    }
    for (const v of xTicks) {
      el('line', { x1: sx(v), x2: sx(v), y1: m.t, y2: m.t + ph, class: 'v' }, grid);
      text(grid, sx(v), m.t + ph + 16, fx(v, xStep), { 'text-anchor': 'middle' });
    }
    el('rect', { x: m.l, y: m.t, width: pw, height: ph, class: 'mchart-frame' }, svg);
    if (spec.xLabel) text(svg, m.l + pw / 2, height - 6, spec.xLabel, { class: 'mchart-label', 'text-anchor': 'middle' });
    if (spec.yLabel) {
      text(svg, 14, m.t + ph / 2, spec.yLabel, {
        class: 'mchart-label', 'text-anchor': 'middle', transform: `rotate(-90 14 ${m.t + ph / 2})` });
    }

    for (const s of series) {
      if (!s.points.length) continue;
      let d = '';
      let prevY = null;
      for (const [x, y] of s.points) {
        const X = sx(Math.min(Math.max(x, xMin), xMax)).toFixed(1);
        const Y = sy(Math.min(Math.max(y, yMin), yMax)).toFixed(1);
        if (!d) d = `M${X},${Y}`;
        else d += s.step ? `H${X}V${Y}` : `L${X},${Y}`;
        prevY = Y;
      }
      const last = s.points[s.points.length - 1][0];
      if (s.step && last < xMax && s.extend !== false) d += `H${sx(xMax).toFixed(1)}`;
      if (s.area && prevY !== null) {
        const first = sx(Math.max(s.points[0][0], xMin)).toFixed(1);
        el('path', { d: `${d}V${sy(yMin).toFixed(1)}H${first}Z`, fill: s.color, class: 'mchart-area' }, svg);
      }
      el('path', { d, stroke: s.color, fill: 'none', class: 'mchart-line' + (s.dashed ? ' dashed' : '') }, svg);
    }
    legend(container, series);

    // Hover read-out: a vertical rule and each series' value there.
    const rule = el('line', { y1: m.t, y2: m.t + ph, class: 'mchart-rule', visibility: 'hidden' }, svg);
    const tip = document.createElement('div');
    tip.className = 'mchart-tip';
    tip.hidden = true;
    container.appendChild(tip);
    const hit = el('rect', { x: m.l, y: m.t, width: pw, height: ph, fill: 'transparent' }, svg);
    hit.addEventListener('mousemove', (ev) => {
      const box = svg.getBoundingClientRect();
      const px = ((ev.clientX - box.left) / box.width) * width;
      const x = xMin + ((px - m.l) / pw) * (xMax - xMin);
      rule.setAttribute('x1', px);
      rule.setAttribute('x2', px);
      rule.setAttribute('visibility', 'visible');
      while (tip.firstChild) tip.removeChild(tip.firstChild);
      const head = document.createElement('b');
      head.textContent = fx(x, spec.x === 'number' ? xStep : Math.min(xStep, 59));
      tip.appendChild(head);
      for (const s of series) {
        const v = valueAt(s, x);
        if (v === null || s.legend === false) continue;
        const row = document.createElement('div');
        const sw = document.createElement('i');
        sw.style.background = s.color;
        row.appendChild(sw);
        row.appendChild(document.createTextNode(`${s.name}: ${fy(v)}`));
        tip.appendChild(row);
      }
      tip.hidden = false;
      const left = (px / width) * box.width;
      tip.style.left = Math.min(left + 12, box.width - 180) + 'px';
      tip.style.top = m.t + 'px';
    });
    hit.addEventListener('mouseleave', () => {
      rule.setAttribute('visibility', 'hidden');
      tip.hidden = true;
    });
    return svg;
  }

  // spec: {title, x, xMin, xMax, lanes: [name...], kinds: {Admit: '#16a34a', ...},
  //        events: [{x, lane, kind, label}]}
  function timeline(container, spec) {
    const lanes = spec.lanes || [];
    const kindNames = Object.keys(spec.kinds || {});
    // Each kind of event has its own row inside a lane, so an admission and the start
    // that follows it in the same second are both visible.
    const laneH = Math.max(22, 6 * kindNames.length + 8);
    const m = { l: 140, r: 16, t: spec.title ? 28 : 10, b: 30 };
    const height = m.t + m.b + Math.max(1, lanes.length) * laneH;
    const { svg, width } = frame(container, spec, height);
    const events = spec.events || [];
    let xMin = spec.xMin;
    let xMax = spec.xMax;
    for (const e of events) {
      if (spec.xMin === undefined) xMin = xMin === undefined ? e.x : Math.min(xMin, e.x);
      if (spec.xMax === undefined) xMax = xMax === undefined ? e.x : Math.max(xMax, e.x);
    }
    if (xMin === undefined) {
      xMin = 0;
      xMax = 1;
    }
    if (xMax <= xMin) xMax = xMin + 1;
    const pw = width - m.l - m.r;
    const sx = (x) => m.l + ((x - xMin) / (xMax - xMin)) * pw;
    const fx = xFormatter(spec.x);
    if (spec.title) text(svg, m.l, 18, spec.title, { class: 'mchart-title' });
    const grid = el('g', { class: 'mchart-grid' }, svg);
    const xStep = spec.x === 'number' ? niceStep(xMax - xMin, pw / 90) : timeStep(xMax - xMin, Math.max(2, Math.floor(pw / 90)));
    let xTicks = ticks(xMin, xMax, xStep);
    if (spec.x === 'clock') {
      const offset = new Date(xMin * 1000).getTimezoneOffset() * 60;
      xTicks = ticks(xMin - offset, xMax - offset, xStep).map((v) => v + offset);
    }
    const bottom = m.t + lanes.length * laneH;
    for (const v of xTicks) {
      el('line', { x1: sx(v), x2: sx(v), y1: m.t, y2: bottom, class: 'v' }, grid);
      text(grid, sx(v), bottom + 16, fx(v, xStep), { 'text-anchor': 'middle' });
    }
    lanes.forEach((name, i) => {
      const y = m.t + i * laneH;
      el('rect', { x: m.l, y, width: pw, height: laneH, class: i % 2 ? 'mchart-lane odd' : 'mchart-lane' }, svg);
      text(svg, m.l - 8, y + laneH / 2 + 4, name.length > 20 ? name.slice(0, 19) + '…' : name,
        { 'text-anchor': 'end', class: 'mchart-lanename' });
    });
    const kinds = spec.kinds || {};
    for (const e of events) {
      const lane = lanes.indexOf(e.lane);
      if (lane < 0) continue;
      const k = Math.max(0, kindNames.indexOf(e.kind));
      const cy = m.t + lane * laneH + 4 + (kindNames.length > 1 ? (k * (laneH - 8)) / (kindNames.length - 1) : laneH / 2 - 4);
      const c = el('circle', { cx: sx(e.x).toFixed(1), cy: cy.toFixed(1), r: 4, fill: kinds[e.kind] || '#6b7280',
        class: 'mchart-event' }, svg);
      const t = el('title', {}, c);
      t.textContent = `${fx(e.x, 1)} ${e.kind}: ${e.label || ''}`;
    }
    const legendSeries = Object.entries(kinds).map(([name, color]) => ({ name, color }));
    legend(container, legendSeries);
    return svg;
  }

  root.MusterChart = { line, timeline, palette: PALETTE, valueAt };
})(typeof window !== 'undefined' ? window : this);
