// Overview: the cluster at a glance and its utilisation over time (ClusterView and its
// utilization and timeline subresources), live from the Workload watch.
'use strict';

(function () {
  const M = window.M;
  const VIEWS = '/apis/muster.dev/v1alpha1/clusterviews/cluster';

  function tile(label, value, extra) {
    return M.h('div', { class: 'tile' }, M.h('div', { class: 'label', text: label }),
      M.h('div', { class: 'value' }, value), extra || null);
  }
  function meter(part, whole) {
    const pct = whole > 0 ? Math.min(100, (100 * part) / whole) : 0;
    return M.h('div', { class: 'meter' }, M.h('span', { class: 'used', style: { left: '0', width: pct + '%' } }));
  }

  function columns(u, key, scale) {
    const out = [];
    for (let i = 0; i < (u.time || []).length; i++) out.push([u.time[i], u[key][i] / (scale || 1)]);
    return out;
  }

  M.pages.overview = {
    title: 'Overview',
    mount(main) {
      const tiles = M.h('div', { class: 'tiles' });
      const gpuChart = M.h('div', { id: 'chart-gpu' });
      const wlChart = M.h('div', { id: 'chart-workloads' });
      const cpuChart = M.h('div', { id: 'chart-cpu' });
      const recent = M.h('tbody');
      const recentBox = M.h('div');
      main.append(
        M.h('h1', { text: 'Cluster overview' }),
        M.h('p', { class: 'subtitle', text: 'Allocation by the scheduler (what admitted, placed gangs hold), updated live.' }),
        tiles,
        M.section('GPUs allocated over time', gpuChart),
        M.h('div', { class: 'grid2' },
          M.section('Workloads over time', wlChart),
          M.section('CPU allocated over time', cpuChart)),
        M.h('div', { style: { height: '16px' } }),
        M.section('Recent admissions, preemptions and evictions',
          recentBox,
          M.h('table', { class: 'data' },
            M.h('thead', {}, M.h('tr', {}, ['Time', 'Action', 'Workload', 'Queue', 'Reason'].map((t) => M.h('th', { text: t })))),
            recent),
          M.h('div', { class: 'small' }, M.h('a', { href: '#/timeline', text: 'Full timeline →' }))),
      );
      const rows = new M.KeyedRows(recent,
        () => M.h('tr', {}, M.h('td', { class: 'mono' }), M.h('td'), M.h('td'), M.h('td'), M.h('td', { class: 'muted' })),
        (tr, e) => {
          const [t, a, w, q, r] = tr.children;
          M.setText(t, M.clock(e.time));
          M.setText(a, e.action);
          a.className = 'act act-' + e.action.toLowerCase();
          if (!w.firstChild || w.firstChild.textContent !== e.workload) {
            const [ns, job] = e.workload.split('/');
            M.replace(w, job ? M.h('a', { href: `#/job/${encodeURIComponent(ns)}/${encodeURIComponent(job)}`, text: e.workload }) : e.workload);
          }
          M.setText(q, e.clusterQueue || '');
          M.setText(r, e.reason || '');
        });

      let lastUtil = null;
      async function load() {
        try {
          const [c, u, tl] = await Promise.all([
            M.api.get(VIEWS), M.api.get(VIEWS + '/utilization'), M.api.get(VIEWS + '/timeline?limit=12')]);
          const gu = M.parseQuantity((c.used || {})['nvidia.com/gpu'] || '0');
          const gt = M.parseQuantity((c.allocatable || {})['nvidia.com/gpu'] || '0');
          const cu = M.parseQuantity((c.used || {}).cpu || '0');
          const ct = M.parseQuantity((c.allocatable || {}).cpu || '0');
          const w = c.workloads || {};
          M.replace(tiles,
            tile('GPUs allocated', [M.number(gu), M.h('small', { text: ` / ${M.number(gt)}` })], meter(gu, gt)),
            tile('CPU allocated (cores)', [M.formatAmount('cpu', cu), M.h('small', { text: ` / ${M.formatAmount('cpu', ct)}` })], meter(cu, ct)),
            tile('Nodes ready', [String(c.nodes.ready), M.h('small', { text: ` / ${c.nodes.total}` })]),
            tile('Most free GPUs on a node', String(c.largestFreeGpus)),
            tile('Pending', M.h('a', { href: '#/workloads?state=Pending', text: M.number(w.Pending || 0) })),
            tile('Running', M.h('a', { href: '#/workloads?state=Running', text: M.number((w.Running || 0) + (w.Admitted || 0)) })),
            tile('Finished', [M.number(w.Succeeded || 0), M.h('small', { text: ` ok · ${M.number(w.Failed || 0)} failed` })]),
          );
          const ut = u.utilization;
          const now = Date.now() / 1000;
          const xMin = ut.time.length ? Math.min(ut.time[0], now - 60) : now - 300;
          const key = JSON.stringify([ut.time.length, ut.time[ut.time.length - 1], Math.floor(now / 15)]);
          if (key !== lastUtil) {
            lastUtil = key;
            MusterChart.line(gpuChart, {
              x: 'clock', xMin, xMax: now, yLabel: 'GPUs', height: 240,
              series: [
                { name: 'allocated', color: '#2563eb', points: columns(ut, 'gpusUsed'), area: true },
                { name: 'allocatable', color: '#111827', points: columns(ut, 'gpusTotal'), dashed: true },
              ],
            });
            MusterChart.line(wlChart, {
              x: 'clock', xMin, xMax: now, yLabel: 'workloads', height: 220,
              series: [
                { name: 'running', color: '#16a34a', points: columns(ut, 'running') },
                { name: 'pending', color: '#d97706', points: columns(ut, 'pending') },
              ],
            });
            MusterChart.line(cpuChart, {
              x: 'clock', xMin, xMax: now, yLabel: 'cores', height: 220,
              series: [
                { name: 'allocated', color: '#9333ea', points: columns(ut, 'cpuUsedMilli', 1000), area: true },
                { name: 'allocatable', color: '#111827', points: columns(ut, 'cpuTotalMilli', 1000), dashed: true },
              ],
            });
          }
          const entries = (tl.entries || []).slice().reverse();
          M.clear(recentBox);
          if (!entries.length) recentBox.append(M.empty('Nothing admitted, preempted or evicted yet.'));
          rows.sync(entries, (e) => `${e.unixTime}|${e.action}|${e.workload}`);
        } catch (e) {
          M.replace(tiles, M.errorBox(e));
        }
      }
      const refresh = M.throttle(() => {
        load();
        M.refreshTop();
      }, 1500);
      load();
      const watch = new M.Watch('/apis/kueue.x-k8s.io/v1beta1/workloads', refresh, { onResync: refresh });
      const tick = setInterval(load, 15000);  // the charts' time axis moves on
      return { unmount() { watch.stop(); clearInterval(tick); } };
    },
  };
})();
