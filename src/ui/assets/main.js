// Starts the dashboard: sign-in, the top bar's cluster summary, and the router.
'use strict';

(function () {
  const M = window.M;

  // The top bar reads the small ClusterView summary every few seconds (and when a page
  // asks, after a watch event): GPUs, nodes, workloads by state.
  async function refreshTop() {
    const el = document.getElementById('topstats');
    try {
      const c = await M.api.get('/apis/muster.dev/v1alpha1/clusterviews/cluster');
      const gpuUsed = M.parseQuantity((c.used || {})['nvidia.com/gpu'] || '0');
      const gpuTotal = M.parseQuantity((c.allocatable || {})['nvidia.com/gpu'] || '0');
      const w = c.workloads || {};
      const item = (label, value, id) => M.h('span', { 'data-stat': id }, label + ' ', M.h('b', { text: value }));
      M.replace(
        el,
        item('GPUs', `${M.number(gpuUsed)} / ${M.number(gpuTotal)} (${M.percent(gpuUsed, gpuTotal)})`, 'gpus'),
        item('Nodes ready', `${c.nodes.ready} / ${c.nodes.total}`, 'nodes'),
        item('Running', M.number((w.Running || 0) + (w.Admitted || 0)), 'running'),
        item('Pending', M.number(w.Pending || 0), 'pending'),
        c.engineError ? M.h('span', { class: 'error', text: c.engineError }) : null,
      );
      M.setText(document.getElementById('navfoot'), `view generation ${c.metadata.resourceVersion} · ${M.number(c.cycles)} cycles`);
    } catch (e) {
      M.replace(el, M.h('span', { text: e.status === 403 ? 'cluster summary: not allowed' : 'cluster summary unavailable' }));
    }
  }
  M.refreshTop = M.throttle(refreshTop, 1000);

  window.addEventListener('DOMContentLoaded', () => {
    M.auth.init();
    refreshTop();
    setInterval(refreshTop, 5000);
    window.addEventListener('hashchange', () => M.router.reload());
    M.router.reload();
  });
})();
