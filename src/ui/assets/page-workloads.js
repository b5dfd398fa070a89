// Workloads: one page of WorkloadViews at a time (server-side paging with continue
// tokens and field selectors, so 10,000 workloads cost one page), with state, queue,
// priority, position in queue and why each waits in words and numbers. The Workload
// watch re-reads the page; rows are updated in place.
'use strict';

(function () {
  const M = window.M;
  const LIST = '/apis/muster.dev/v1alpha1/workloadviews';
  const STATES = ['Pending', 'Admitted', 'Running', 'Succeeded', 'Failed'];
  const PAGE = 100;

  // Where a workload stands, in one cell: its wait (message and missing amounts) or its
  // placement.
  M.whyCell = function (w) {
    const parts = [];
    if (w.state === 'Running' || w.state === 'Succeeded') {
      const nodes = [...new Set((w.placement || []).map((p) => p.node))];
      const gpus = (w.placement || []).reduce((n, p) => n + (p.gpus || []).length, 0);
      if (nodes.length) {
        parts.push(M.h('div', { class: 'msg muted' },
          `on ${nodes.slice(0, 3).join(', ')}${nodes.length > 3 ? ` +${nodes.length - 3}` : ''}` + (gpus ? ` · ${gpus} GPU${gpus > 1 ? 's' : ''}` : '')));
      }
      return parts;
    }
    if (w.message) parts.push(M.h('div', { class: 'msg', text: w.message }));
    if ((w.shortfall || []).length) {
      parts.push(M.h('div', { class: 'short' }, w.shortfall.map((s) => M.h('span', {
        title: `requests ${M.formatQuantity(s.resource, s.requested)}, ${M.formatQuantity(s.resource, s.available)} available`,
        text: `${s.flavor ? s.flavor + ': ' : ''}${M.shortResource(s.resource)} needs ${M.formatQuantity(s.resource, s.requested)}, ` +
          `${M.formatQuantity(s.resource, s.available)} free (−${M.formatQuantity(s.resource, s.missing)})`,
      }))));
    }
    if ((w.preemptionCandidates || []).length) {
      const preempting = w.preemptionCandidates.filter((c) => c.preempting).length;
      parts.push(M.h('div', { class: 'small muted' },
        preempting ? `preempting ${preempting} workload${preempting > 1 ? 's' : ''}` :
          `${w.preemptionCandidates.length} preemption candidate${w.preemptionCandidates.length > 1 ? 's' : ''} by policy`));
    }
    if (w.preemptedFor) parts.push(M.h('div', { class: 'small muted', text: `being preempted for ${w.preemptedFor}` }));
    return parts;
  };

  M.pages.workloads = {
    title: 'Workloads',
    mount(main, route) {
      const t0 = performance.now();
      const q = route.query;
      const filter = { state: q.get('state') || '', queue: q.get('queue') || '', namespace: q.get('namespace') || '' };
      const chips = M.h('div', { class: 'row', id: 'state-chips' });
      const queueSel = M.h('select', { id: 'queue-filter', 'aria-label': 'ClusterQueue' }, M.h('option', { value: '', text: 'All queues' }));
      const nsInput = M.h('input', { type: 'search', id: 'ns-filter', placeholder: 'namespace', value: filter.namespace, 'aria-label': 'namespace' });
      const status = M.h('div');
      const body = M.h('tbody');
      const pagerText = M.h('span', { id: 'pager-text' });
      const prev = M.h('button', { type: 'button', text: '‹ Previous', disabled: true });
      const next = M.h('button', { type: 'button', text: 'Next ›', disabled: true });
      main.append(
        M.h('h1', { text: 'Workloads' }),
        M.h('p', { class: 'subtitle', text: 'Every job as the scheduler sees it: its queue, its place in line, and what it is waiting for.' }),
        M.h('div', { class: 'filters' }, chips, M.h('span', { class: 'spacer' }), nsInput, queueSel),
        status,
        M.h('section', { class: 'card' },
          M.h('table', { class: 'data', id: 'workload-table' },
            M.h('thead', {}, M.h('tr', {},
              M.h('th', { text: 'Workload' }), M.h('th', { text: 'Queue' }), M.h('th', { text: 'State' }),
              M.h('th', { class: 'num', text: 'Priority' }), M.h('th', { class: 'num', text: 'Position' }),
              M.h('th', { text: 'Waiting for / placement' }), M.h('th', { class: 'num', text: 'Age' }))),
            body),
          M.h('div', { class: 'pager' }, pagerText, prev, next)),
      );

      function setRoute() {
        const p = new URLSearchParams();
        for (const [k, v] of Object.entries(filter)) if (v) p.set(k, v);
        const hash = '#/workloads' + (p.toString() ? '?' + p : '');
        if (location.hash !== hash) history.replaceState(null, '', hash);
      }

      const rows = new M.KeyedRows(body,
        () => M.h('tr', {}, M.h('td'), M.h('td', { class: 'nowrap' }), M.h('td'), M.h('td', { class: 'num' }), M.h('td', { class: 'num' }), M.h('td', { class: 'why' }), M.h('td', { class: 'num muted' })),
        (tr, w) => {
          const [name, queue, state, prio, pos, why, age] = tr.children;
          const ns = w.metadata.namespace;
          const key = `${ns}/${w.metadata.name}`;
          if (name.dataset.k !== key) {
            name.dataset.k = key;
            M.replace(name, M.h('a', { href: `#/workload/${encodeURIComponent(ns)}/${encodeURIComponent(w.metadata.name)}`, text: w.job.name }),
              M.h('div', { class: 'small muted', text: `${ns} · ${w.job.kind}` }));
          }
          const qtext = (w.queue.localQueue ? w.queue.localQueue + ' → ' : '') + (w.queue.clusterQueue || '–');
          M.setText(queue, qtext);
          const shown = w.inadmissible ? 'Inadmissible' : w.state;
          if (state.dataset.s !== shown) {
            state.dataset.s = shown;
            M.replace(state, M.badge(shown));
          }
          M.setText(prio, w.priority);
          const position = w.positionInClusterQueue !== undefined ? String(w.positionInClusterQueue + 1) : '';
          if (pos.dataset.p !== position) {
            pos.dataset.p = position;
            M.replace(pos, position ? M.h('span', { class: 'pos', title: `#${position} in ${w.queue.clusterQueue}` + (w.positionInLocalQueue !== undefined ? `, #${w.positionInLocalQueue + 1} in ${w.queue.localQueue}` : ''), text: position }) : '');
          }
          const whyKey = JSON.stringify([w.state, w.message, w.shortfall, w.preemptionCandidates, w.preemptedFor, (w.placement || []).length]);
          if (why.dataset.k !== whyKey) {
            why.dataset.k = whyKey;
            M.replace(why, M.whyCell(w));
          }
          M.setText(age, M.since(w.submitTime));
        });

      let tokens = [''];  // continue token of each page shown so far
      let pageIndex = 0;
      let counts = {};
      let first = true;

      function renderChips() {
        const total = STATES.reduce((n, s) => n + (counts[s] || 0), 0);
        const chip = (label, value, n) => M.h('button', {
          type: 'button', class: 'chip' + (filter.state === value ? ' on' : ''), 'data-state': value || 'all',
          onclick: () => { filter.state = value; tokens = ['']; pageIndex = 0; setRoute(); renderChips(); load(); },
        }, label, M.h('b', { text: M.number(n) }));
        M.replace(chips, chip('All', '', total), STATES.map((s) => chip(s, s, counts[s] || 0)));
      }

      async function loadQueues() {
        try {
          const qs = await M.api.all('/apis/muster.dev/v1alpha1/queueviews');
          for (const qv of qs.filter((x) => x.queue.kind !== 'Cohort')) {
            queueSel.append(M.h('option', { value: qv.queue.name, text: qv.queue.name, selected: qv.queue.name === filter.queue }));
          }
        } catch (e) {
          /* the table says why */
        }
      }

      async function countByState(path) {
        const out = {};
        await Promise.all(STATES.map(async (state) => {
          const sel = ['state=' + state].concat(filter.queue ? ['queue.clusterQueue=' + filter.queue] : []);
          const p = await M.api.page(path, { limit: 1, fieldSelector: sel.join(',') }).catch(() => null);
          if (p) out[state] = p.items.length + p.remaining;
        }));
        return out;
      }

      async function load() {
        const selectors = [];
        if (filter.state) selectors.push('state=' + filter.state);
        if (filter.queue) selectors.push('queue.clusterQueue=' + filter.queue);
        const path = filter.namespace
          ? `/apis/muster.dev/v1alpha1/namespaces/${encodeURIComponent(filter.namespace)}/workloadviews`
          : LIST;
        try {
          const [page, cluster] = await Promise.all([
            M.api.page(path, { limit: PAGE, continue: tokens[pageIndex], fieldSelector: selectors.join(',') }),
            filter.namespace || filter.queue ? null : M.api.get('/apis/muster.dev/v1alpha1/clusterviews/cluster').catch(() => null),
          ]);
          // The chips count what the table can show: the ClusterView's counts (those of
          // the namespaces this user may read), else one small list per state.
          counts = cluster ? cluster.workloads || {} : await countByState(path);
          renderChips();
          M.clear(status);
          rows.sync(page.items, (w) => `${w.metadata.namespace}/${w.metadata.name}`);
          if (!page.items.length) status.append(M.empty(filter.state || filter.queue || filter.namespace ? 'No workloads match.' : 'No workloads yet.'));
          tokens[pageIndex + 1] = page.continue;
          const from = pageIndex * PAGE;
          M.setText(pagerText, page.items.length
            ? `${M.number(from + 1)}–${M.number(from + page.items.length)} of ${M.number(from + page.items.length + page.remaining)}`
            : '');
          prev.disabled = pageIndex === 0;
          next.disabled = !page.continue;
          if (first) {
            first = false;
            // First render of the page's data: read by the browser test and reported.
            window.__muster = Object.assign(window.__muster || {}, { workloadsFirstRenderMs: performance.now() - t0, workloadsRows: page.items.length });
            document.body.dataset.workloadsReady = '1';
          }
        } catch (e) {
          M.replace(status, M.errorBox(e));
        }
      }

      prev.addEventListener('click', () => { if (pageIndex > 0) { pageIndex--; load(); } });
      next.addEventListener('click', () => { if (tokens[pageIndex + 1]) { pageIndex++; load(); } });
      queueSel.addEventListener('change', () => { filter.queue = queueSel.value; tokens = ['']; pageIndex = 0; setRoute(); load(); });
      nsInput.addEventListener('change', () => { filter.namespace = nsInput.value.trim(); tokens = ['']; pageIndex = 0; setRoute(); load(); });

      renderChips();
      load();
      loadQueues();
      const refresh = M.throttle(load, 700);
      const watchPath = filter.namespace
        ? `/apis/kueue.x-k8s.io/v1beta1/namespaces/${encodeURIComponent(filter.namespace)}/workloads`
        : '/apis/kueue.x-k8s.io/v1beta1/workloads';
      // A user who may not watch every namespace's Workloads (RBAC bound in some
      // namespaces only) sees the page re-read every few seconds instead.
      let poll = null;
      const watch = new M.Watch(watchPath, () => { refresh(); M.refreshTop(); }, {
        onResync: refresh,
        onDenied: () => { if (!poll) poll = setInterval(refresh, 3000); },
      });
      const tick = setInterval(load, 30000);  // ages move on
      return { unmount() { watch.stop(); clearInterval(tick); if (poll) clearInterval(poll); } };
    },
  };
})();
