// Queues: the cohort / ClusterQueue tree and Volcano queues with nominal, used,
// borrowed, lent and available quota per flavor and resource, fair-sharing shares and
// workload counts (QueueView), live from the ClusterQueue watch (queue status changes
// whenever admission does).
'use strict';

(function () {
  const M = window.M;
  const LIST = '/apis/muster.dev/v1alpha1/queueviews';

  // A stacked bar: used within nominal, borrowed beyond it, lent to others; the black
  // tick is the nominal quota. Scale: the largest of nominal+borrowing headroom and use.
  function quotaMeter(q) {
    const r = q.resource;
    const nominal = M.parseQuantity(q.nominal);
    const used = M.parseQuantity(q.used);
    const borrowed = M.parseQuantity(q.borrowed);
    const lent = M.parseQuantity(q.lent);
    const avail = M.parseQuantity(q.available);
    const scale = Math.max(nominal, used + lent, used + avail, 1e-9);
    const pct = (x) => Math.max(0, Math.min(100, (100 * x) / scale)) + '%';
    const own = Math.max(0, used - borrowed);
    const bar = M.h('div', { class: 'meter', title: `${M.shortResource(r)}: used ${M.formatQuantity(r, q.used)} of nominal ${M.formatQuantity(r, q.nominal)}` },
      M.h('span', { class: 'used', style: { left: '0', width: pct(own) } }),
      M.h('span', { class: 'borrowed', style: { left: pct(own), width: pct(borrowed) } }),
      M.h('span', { class: 'lent', style: { left: pct(used), width: pct(lent) } }),
      M.h('span', { class: 'nominal', style: { left: '0', width: pct(nominal) } }));
    return bar;
  }

  function treeOrder(queues) {
    const byName = new Map(queues.map((q) => [q.metadata.name, q]));
    const out = [];
    const visit = (q, depth) => {
      out.push({ q, depth });
      for (const c of q.children || []) if (byName.has(c)) visit(byName.get(c), depth + 1);
    };
    for (const q of queues) if (!q.parent || !byName.has(q.parent)) visit(q, 0);
    return out;
  }

  const CELLS = ['queue', 'resource', 'bar', 'used', 'nominal', 'borrowed', 'lent', 'available', 'limits', 'pending', 'admitted', 'share'];

  M.pages.queues = {
    title: 'Queues',
    mount(main) {
      const status = M.h('div');
      const body = M.h('tbody');
      const volcanoBody = M.h('tbody');
      const volcanoBox = M.h('div');
      main.append(
        M.h('h1', { text: 'Queues' }),
        M.h('p', { class: 'subtitle', text: 'Quota per flavor and resource: what each queue holds, borrows from its cohort and lends to it, and what it could still use now.' }),
        M.h('div', { class: 'legend' },
          M.h('span', {}, M.h('i', { class: 'used' }), 'used within nominal'),
          M.h('span', {}, M.h('i', { class: 'borrowed' }), 'borrowed'),
          M.h('span', {}, M.h('i', { class: 'lent' }), 'lent to the cohort'),
          M.h('span', {}, M.h('i', { class: 'free' }), 'free'),
          M.h('span', {}, M.h('i', { class: 'nominal' }), 'nominal quota')),
        M.h('div', { style: { height: '10px' } }),
        status,
        M.section('Kueue cohorts and ClusterQueues', M.h('div', { class: 'scroll' },
          M.h('table', { class: 'data', id: 'queue-table' },
            M.h('thead', {}, M.h('tr', {},
              M.h('th', { text: 'Queue' }), M.h('th', { text: 'Flavor / resource' }), M.h('th', { text: 'Usage' }),
              ...['Used', 'Nominal', 'Borrowed', 'Lent', 'Available'].map((t) => M.h('th', { class: 'num', text: t })),
              M.h('th', { text: 'Limits', title: 'borrowingLimit / lendingLimit' }),
              ...['Pending', 'Admitted', 'Share'].map((t) => M.h('th', { class: 'num', text: t })))),
            body))),
        volcanoBox,
      );

      const rows = new M.KeyedRows(body,
        () => M.h('tr', {}, CELLS.map((c) => M.h('td', { class: ['used', 'nominal', 'borrowed', 'lent', 'available', 'pending', 'admitted', 'share'].includes(c) ? 'num' : 'nowrap', 'data-cell': c }))),
        (tr, row) => {
          const c = Object.fromEntries([...tr.children].map((td) => [td.dataset.cell, td]));
          const q = row.q;
          tr.className = row.cell ? '' : 'group';
          tr.dataset.queue = q.queue.name;
          if (!row.cell) {
            const indent = 'indent' + Math.min(3, row.depth);
            c.queue.className = row.depth ? indent : '';
            const label = q.queue.kind === 'ClusterQueue'
              ? M.h('a', { href: '#/workloads?queue=' + encodeURIComponent(q.queue.name), text: q.queue.name })
              : q.queue.name;
            const key = q.queue.kind + q.queue.name;
            if (c.queue.dataset.key !== key) {
              c.queue.dataset.key = key;
              M.replace(c.queue, M.h('span', { class: 'tree-kind', text: q.queue.kind === 'ClusterQueue' ? 'CQ' : q.queue.kind }), label,
                q.inactiveMessage ? M.h('div', { class: 'error small', text: q.inactiveMessage }) : null);
            }
            for (const k of ['resource', 'bar', 'used', 'nominal', 'borrowed', 'lent', 'available', 'limits']) M.setText(c[k], '');
            M.setText(c.pending, M.number(q.workloads.pending) + (q.workloads.inadmissible ? ` (${q.workloads.inadmissible} inadmissible)` : ''));
            M.setText(c.admitted, M.number(q.workloads.admitted));
            M.setText(c.share, q.queue.kind === 'Cohort' && !q.parent ? '' : String(q.fairSharing.weightedShare) +
              (q.fairSharing.weight !== '1' ? ` (w ${q.fairSharing.weight})` : ''));
            return;
          }
          const cell = row.cell;
          const r = cell.resource;
          c.queue.className = 'indent' + Math.min(3, row.depth + 1);
          M.setText(c.queue, '');
          M.setText(c.resource, (cell.flavor ? cell.flavor + ' / ' : '') + M.shortResource(r));
          const barKey = [cell.used, cell.nominal, cell.borrowed, cell.lent, cell.available].join('|');
          if (c.bar.dataset.k !== barKey) {
            c.bar.dataset.k = barKey;
            M.replace(c.bar, quotaMeter(cell));
          }
          M.setText(c.used, M.formatQuantity(r, cell.used));
          M.setText(c.nominal, M.formatQuantity(r, cell.nominal));
          M.setText(c.borrowed, cell.borrowed === '0' ? '–' : M.formatQuantity(r, cell.borrowed));
          M.setText(c.lent, cell.lent === '0' ? '–' : M.formatQuantity(r, cell.lent));
          M.setText(c.available, M.formatQuantity(r, cell.available));
          const lim = (x) => (x !== undefined ? M.formatQuantity(r, x) : '∞');
          M.setText(c.limits, cell.borrowingLimit === undefined && cell.lendingLimit === undefined ? '–'
            : `${lim(cell.borrowingLimit)} / ${lim(cell.lendingLimit)}`);
          for (const k of ['pending', 'admitted', 'share']) M.setText(c[k], '');
        });

      const vrows = new M.KeyedRows(volcanoBody,
        () => M.h('tr', {}, [0, 1, 2, 3, 4, 5, 6, 7].map((i) => M.h('td', { class: i >= 5 ? 'num' : '' }))),
        (tr, q) => {
          const td = tr.children;
          const fmt = (m) => Object.entries(m || {}).map(([k, v]) => `${M.shortResource(k)} ${M.formatQuantity(k, v)}`).join(', ') || '–';
          M.setText(td[0], q.queue.name);
          M.setText(td[1], fmt(q.volcano.deserved));
          M.setText(td[2], fmt(q.volcano.allocated));
          M.setText(td[3], fmt(q.volcano.capability));
          M.setText(td[4], fmt(q.volcano.guarantee));
          M.setText(td[5], (q.fairSharing.weight || '1'));
          M.setText(td[6], M.number(q.workloads.pending));
          M.setText(td[7], M.number(q.workloads.admitted));
        });

      async function load() {
        try {
          const items = await M.api.all(LIST);
          const kueue = items.filter((q) => q.queue.kind !== 'VolcanoQueue');
          const volcano = items.filter((q) => q.queue.kind === 'VolcanoQueue');
          M.clear(status);
          if (!kueue.length) status.append(M.empty('No ClusterQueues or Cohorts.'));
          const flat = [];
          for (const { q, depth } of treeOrder(kueue)) {
            flat.push({ key: q.metadata.name, q, depth });
            for (const cell of q.quota || []) {
              flat.push({ key: `${q.metadata.name}|${cell.flavor || ''}|${cell.resource}`, q, depth, cell });
            }
          }
          rows.sync(flat, (r) => r.key);
          if (volcano.length && !volcanoBox.firstChild) {
            volcanoBox.append(M.section('Volcano queues',
              M.h('table', { class: 'data', id: 'volcano-table' },
                M.h('thead', {}, M.h('tr', {}, ['Queue', 'Deserved', 'Allocated', 'Capability', 'Guarantee', 'Weight', 'Pending', 'Admitted']
                  .map((t, i) => M.h('th', { class: i >= 5 ? 'num' : '', text: t })))),
                volcanoBody)));
          }
          vrows.sync(volcano, (q) => q.metadata.name);
        } catch (e) {
          M.replace(status, M.errorBox(e));
        }
      }
      const refresh = M.throttle(load, 1000);
      load();
      const watches = [
        new M.Watch('/apis/kueue.x-k8s.io/v1beta1/clusterqueues', refresh, { onResync: refresh }),
        new M.Watch('/apis/kueue.x-k8s.io/v1beta1/workloads', refresh, { onResync: refresh }),
      ];
      return { unmount() { watches.forEach((w) => w.stop()); } };
    },
  };
})();
