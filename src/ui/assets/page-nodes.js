// Nodes: a map of the cluster by block and rack (Kueue Topology levels, else rack and
// block labels), each node with its GPUs grouped by NUMA zone and coloured by the
// workload holding them (NodeView). Live from the pod and node watches; a node's box
// is redrawn only when its view changed.
'use strict';

(function () {
  const M = window.M;
  const LIST = '/apis/muster.dev/v1alpha1/nodeviews';

  function amount(m, r) {
    return M.parseQuantity((m || {})[r] || '0');
  }
  function bar(label, used, total) {
    const pct = total > 0 ? Math.min(100, (100 * used) / total) : 0;
    return M.h('div', { class: 'meter', title: `${label} ${M.percent(used, total)}` }, M.h('span', { class: 'used', style: { left: '0', width: pct + '%' } }));
  }

  function gpuBox(n, g) {
    const held = !!g.workload;
    const el = M.h('span', {
      class: 'gpu' + (held ? ' held' : '') + (held && g.milliUsed < 1000 ? ' shared' : ''),
      'data-gpu': g.index,
      title: `GPU ${g.index}` + (g.numaZone !== undefined ? ` · NUMA ${g.numaZone}` : '') +
        (held ? ` · ${g.workload} ${g.pod}` + (g.milliUsed < 1000 ? ` (${g.milliUsed / 10}%)` : '') : ' · free'),
    });
    if (held) {
      el.style.background = M.colorFor(g.workload);
      el.dataset.workload = g.workload;
    }
    return el;
  }

  function nodeBox(n) {
    const gpus = n.gpus || [];
    const zones = n.numaZones || [];
    const zoneEls = [];
    if (zones.length && gpus.some((g) => g.numaZone !== undefined)) {
      zones.forEach((z, zi) => {
        const members = gpus.filter((g) => g.numaZone === zi);
        zoneEls.push(M.h('div', { class: 'zone', title: `NUMA zone ${z.name}` + ((z.workloads || []).length ? ': ' + z.workloads.join(', ') : '') },
          members.map((g) => gpuBox(n, g))));
      });
      const loose = gpus.filter((g) => g.numaZone === undefined);
      if (loose.length) zoneEls.push(M.h('div', { class: 'zone nozone' }, loose.map((g) => gpuBox(n, g))));
    } else if (gpus.length) {
      zoneEls.push(M.h('div', { class: 'zone nozone' }, gpus.map((g) => gpuBox(n, g))));
    }
    const cls = 'node' + (n.ready ? '' : ' notready') + (n.unschedulable ? ' cordoned' : '');
    const gu = amount(n.used, 'nvidia.com/gpu');
    const gt = amount(n.allocatable, 'nvidia.com/gpu');
    return M.h('div', { class: cls, 'data-node': n.metadata.name,
      title: `${n.metadata.name}${n.ready ? '' : ' (not ready)'}${n.unschedulable ? ' (cordoned)' : ''}\n` +
        `GPUs ${gu}/${gt} · cpu ${M.formatQuantity('cpu', (n.used || {}).cpu || '0')}/${M.formatQuantity('cpu', (n.allocatable || {}).cpu || '0')}` +
        ` · memory ${M.formatQuantity('memory', (n.used || {}).memory || '0')}/${M.formatQuantity('memory', (n.allocatable || {}).memory || '0')}` },
      M.h('div', { class: 'nname', text: n.metadata.name }),
      zoneEls.length ? M.h('div', { class: 'zones' }, zoneEls) : null,
      M.h('div', { class: 'bars' },
        bar('cpu', amount(n.used, 'cpu'), amount(n.allocatable, 'cpu')),
        bar('memory', amount(n.used, 'memory'), amount(n.allocatable, 'memory'))));
  }

  M.pages.nodes = {
    title: 'Nodes',
    mount(main) {
      const status = M.h('div');
      const summary = M.h('div', { class: 'muted small' });
      const holders = M.h('div', { class: 'holders' });
      const map = M.h('div', { id: 'node-map' });
      main.append(
        M.h('h1', { text: 'Nodes' }),
        M.h('p', { class: 'subtitle', text: 'Each square is a GPU, grouped by NUMA zone (dashed) and coloured by the workload holding it; bars are cpu and memory.' }),
        status,
        M.section('GPU holders', summary, holders),
        M.section('Cluster map', map));
      // node name -> {json, el}; blocks/racks -> container elements.
      const drawn = new Map();
      const groups = new Map();

      function groupEl(block, rack) {
        const bkey = block;
        let b = groups.get(bkey);
        if (!b) {
          const racks = M.h('div', { class: 'racks' });
          const headStats = M.h('span', { class: 'muted small' });
          const el = M.h('div', { class: 'block', 'data-block': block }, M.h('h3', {}, block || 'Nodes', headStats), racks);
          b = { el, racks, headStats, racksMap: new Map() };
          groups.set(bkey, b);
          map.append(el);
        }
        let r = b.racksMap.get(rack);
        if (!r) {
          const nodes = M.h('div', { class: 'nodes' });
          const stats = M.h('span');
          const el = M.h('div', { class: 'rack', 'data-rack': rack }, M.h('div', { class: 'rackhead' }, M.h('b', { text: rack || 'no rack' }), stats), nodes);
          r = { el, nodes, stats };
          b.racksMap.set(rack, r);
          b.racks.append(el);
        }
        return { block: b, rack: r };
      }

      async function load() {
        try {
          const items = await M.api.all(LIST, {}, 20000);
          M.clear(status);
          if (!items.length) status.append(M.empty('No nodes.'));
          const levels = (items[0] && items[0].topology) || [];
          const path = (n) => {
            const t = n.topology || [];
            const label = (i) => (t[i] ? `${t[i].key.split('/').pop()} ${t[i].value || '–'}` : '');
            if (t.length >= 2) return [label(t.length - 2), label(t.length - 1)];
            if (t.length === 1) return ['', label(0)];
            return ['', ''];
          };
          const seen = new Set();
          const totals = new Map();  // group key -> [used, total]
          const holderGpus = new Map();
          let used = 0;
          let total = 0;
          for (const n of items) {
            const [block, rack] = path(n);
            const g = groupEl(block, rack);
            const key = JSON.stringify(n);
            let d = drawn.get(n.metadata.name);
            if (!d || d.key !== key) {
              const el = nodeBox(n);
              if (d) d.el.replaceWith(el);
              d = { key, el, rack: g.rack };
              drawn.set(n.metadata.name, d);
            }
            if (d.el.parentNode !== g.rack.nodes) g.rack.nodes.append(d.el);
            seen.add(n.metadata.name);
            const gu = amount(n.used, 'nvidia.com/gpu');
            const gt = amount(n.allocatable, 'nvidia.com/gpu');
            used += gu;
            total += gt;
            for (const k of ['b:' + block, 'r:' + block + '|' + rack]) {
              const t = totals.get(k) || [0, 0, 0];
              t[0] += gu;
              t[1] += gt;
              t[2] += 1;
              totals.set(k, t);
            }
            for (const gpu of n.gpus || []) if (gpu.workload) holderGpus.set(gpu.workload, (holderGpus.get(gpu.workload) || 0) + 1);
          }
          for (const [name, d] of drawn) {
            if (!seen.has(name)) {
              d.el.remove();
              drawn.delete(name);
            }
          }
          for (const [block, b] of groups) {
            const t = totals.get('b:' + block) || [0, 0, 0];
            M.setText(b.headStats, `${t[2]} nodes · GPUs ${t[0]}/${t[1]}`);
            for (const [rack, r] of b.racksMap) {
              const rt = totals.get('r:' + block + '|' + rack) || [0, 0, 0];
              M.setText(r.stats, `${rt[2]} nodes · GPUs ${rt[0]}/${rt[1]}`);
            }
          }
          M.setText(summary, `${items.length} nodes · GPUs held ${used} of ${total}` +
            (levels.length ? ` · grouped by ${levels.map((l) => l.key).join(' / ')}` : ''));
          const top = [...holderGpus.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
          M.replace(holders, top.length ? top.slice(0, 40).map(([w, n]) => {
            const [wns, job] = w.split('/');
            // A workload of a namespace this user may not read has no name and no link.
            return M.h(job ? 'a' : 'span', job ? { href: `#/job/${encodeURIComponent(wns)}/${encodeURIComponent(job)}` } : { class: 'muted' },
              M.h('i', { style: { background: M.colorFor(w) } }), `${w} (${n})`);
          }) : M.h('span', { class: 'muted', text: 'No GPU is held.' }),
          top.length > 40 ? M.h('span', { class: 'muted', text: `and ${top.length - 40} more` }) : null);
          document.body.dataset.nodesReady = '1';
        } catch (e) {
          M.replace(status, M.errorBox(e));
        }
      }
      map.addEventListener('click', (ev) => {
        const w = ev.target && ev.target.dataset && ev.target.dataset.workload;
        if (!w) return;
        const [wns, job] = w.split('/');
        if (!job) return;  // withheld: another namespace's
        M.router.go(`#/job/${encodeURIComponent(wns)}/${encodeURIComponent(job)}`);
      });
      const refresh = M.throttle(load, 1500);
      load();
      const watches = [
        new M.Watch('/api/v1/pods', refresh, { onResync: refresh }),
        new M.Watch('/api/v1/nodes', refresh, { onResync: refresh }),
      ];
      return { unmount() { watches.forEach((w) => w.stop()); } };
    },
  };
})();
