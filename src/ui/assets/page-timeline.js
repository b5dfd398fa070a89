// Timeline: admissions, starts, preemptions, evictions and completions per queue
// (ClusterView's timeline subresource), as a lane chart and a table, newest first.
// Live from the Event watch (every decision also becomes an Event on its job).
'use strict';

(function () {
  const M = window.M;
  const TIMELINE = '/apis/muster.dev/v1alpha1/clusterviews/cluster/timeline';
  const KINDS = { Admit: '#16a34a', Start: '#0891b2', Preempt: '#d97706', Evict: '#dc2626', Finish: '#6b7280', Fail: '#991b1b' };

  M.pages.timeline = {
    title: 'Timeline',
    mount(main) {
      const chips = M.h('div', { class: 'row' });
      const chart = M.h('div', { id: 'timeline-chart' });
      const status = M.h('div');
      const body = M.h('tbody');
      const shown = new Set(Object.keys(KINDS));
      main.append(
        M.h('h1', { text: 'Timeline' }),
        M.h('p', { class: 'subtitle', text: 'What the scheduler decided, per queue: admissions, starts, preemptions, evictions and completions.' }),
        M.h('div', { class: 'filters' }, chips),
        M.section('', chart),
        status,
        M.section('Entries',
          M.h('table', { class: 'data', id: 'timeline-table' },
            M.h('thead', {}, M.h('tr', {}, ['Time', 'Action', 'Workload', 'Queue', 'Reason', 'Message'].map((t) => M.h('th', { text: t })))),
            body)));

      const rows = new M.KeyedRows(body,
        () => M.h('tr', {}, M.h('td', { class: 'mono' }), M.h('td'), M.h('td'), M.h('td'), M.h('td'), M.h('td', { class: 'small muted' })),
        (tr, e) => {
          const [t, a, w, q, r, m] = tr.children;
          M.setText(t, M.dateTime(e.time));
          M.setText(a, e.action);
          a.className = 'act act-' + e.action.toLowerCase();
          if (w.dataset.k !== e.workload) {
            w.dataset.k = e.workload;
            const [ns, job] = e.workload.split('/');
            M.replace(w, job ? M.h('a', { href: `#/job/${encodeURIComponent(ns)}/${encodeURIComponent(job)}`, text: e.workload }) : e.workload);
          }
          M.setText(q, e.clusterQueue || '');
          M.setText(r, e.reason || '');
          M.setText(m, e.message || '');
        });

      let entries = [];
      function render() {
        const counts = {};
        for (const e of entries) counts[e.action] = (counts[e.action] || 0) + 1;
        M.replace(chips, Object.keys(KINDS).map((k) => M.h('button', {
          type: 'button', class: 'chip' + (shown.has(k) ? ' on' : ''), 'data-action': k,
          onclick: () => { if (shown.has(k)) shown.delete(k); else shown.add(k); render(); },
        }, k, M.h('b', { text: M.number(counts[k] || 0) }))));
        const visible = entries.filter((e) => shown.has(e.action) || !KINDS[e.action]);
        const lanes = [...new Set(visible.map((e) => e.clusterQueue || '(no queue)'))].sort();
        const now = Date.now() / 1000;
        const first = visible.length ? visible[0].unixTime : now - 300;
        MusterChart.timeline(chart, {
          x: 'clock', xMin: Math.min(first, now - 60) - 5, xMax: now, lanes, kinds: KINDS,
          events: visible.map((e) => ({ x: e.unixTime, lane: e.clusterQueue || '(no queue)', kind: e.action, label: `${e.workload} ${e.reason || ''}` })),
        });
        M.clear(status);
        if (!visible.length) status.append(M.empty('Nothing yet.'));
        rows.sync(visible.slice().reverse().slice(0, 500), (e) => `${e.unixTime}|${e.action}|${e.workload}`);
      }

      async function load() {
        try {
          const tl = await M.api.get(TIMELINE);
          entries = tl.entries || [];
          render();
          document.body.dataset.timelineReady = '1';
        } catch (e) {
          M.replace(status, M.errorBox(e));
        }
      }
      const refresh = M.throttle(load, 1000);
      load();
      const watch = new M.Watch('/api/v1/events', refresh, { onResync: refresh });
      const tick = setInterval(render, 30000);
      return { unmount() { watch.stop(); clearInterval(tick); } };
    },
  };
})();
