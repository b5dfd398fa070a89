// Job page (#/workload/NS/WORKLOAD or #/job/NS/JOB): one workload's state, queue and
// place in line, why it waits (missing amounts, preemption candidates), its pods and
// ranks with where they run, the Workload's conditions, the job's Events, the
// scheduler's decision-log entries and the tail of each pod's log. Live from watches on
// its Workload, pods and events.
'use strict';

(function () {
  const M = window.M;
  const VIEWS = '/apis/muster.dev/v1alpha1';
  // Labels each job controller puts on its pods (muster serve's own first).
  const POD_LABELS = ['muster.dev/job-name', 'training.kubeflow.org/job-name', 'jobset.sigs.k8s.io/jobset-name',
    'batch.kubernetes.io/job-name', 'volcano.sh/job-name', 'job-name'];
  const LOG_PODS = 6;

  const dl = (pairs) => M.h('dl', { class: 'kv' }, pairs.filter(Boolean).map(([k, v]) => [M.h('dt', { text: k }), M.h('dd', {}, v)]));
  const table = (id, heads, rows) => M.h('table', { class: 'data', id },
    M.h('thead', {}, M.h('tr', {}, heads.map((h) => M.h('th', { class: h.endsWith('#') ? 'num' : '', text: h.replace(/#$/, '') })))),
    M.h('tbody', {}, rows));

  function podPhase(p) {
    if (!p) return '–';
    if (p.metadata.deletionTimestamp) return 'Terminating';
    const waiting = ((p.status || {}).containerStatuses || []).map((c) => c.state && c.state.waiting && c.state.waiting.reason).find(Boolean);
    return waiting || (p.status || {}).phase || 'Pending';
  }

  M.pages.workload = {
    title: 'Job',
    nav: 'workloads',
    mount(main, route) {
      const [ns, name] = route.args;
      const head = M.h('div');
      const why = M.h('div');
      const summary = M.h('div');
      const pods = M.h('div');
      const conditions = M.h('div');
      const events = M.h('div');
      const decisions = M.h('div');
      const logs = M.h('div');
      main.append(head, why,
        M.h('div', { class: 'grid2' }, M.section('Summary', summary), M.section('Workload conditions', conditions)),
        M.h('div', { style: { height: '16px' } }),
        M.section('Pods and ranks', pods),
        M.h('div', { class: 'grid2' }, M.section('Events', events), M.section('Scheduler decisions', decisions)),
        M.h('div', { style: { height: '16px' } }),
        M.section('Logs (tail)', logs));

      let view = null;
      let podSelector = '';
      let watches = [];
      const openLogs = new Set();

      async function findView() {
        if (route.page === 'job') {
          // From a job name (timeline entries name jobs): find its workload.
          const list = await M.api.get(`${VIEWS}/namespaces/${encodeURIComponent(ns)}/workloadviews?fieldSelector=${encodeURIComponent('job.name=' + name)}`);
          if (!list.items.length) throw new M.ApiError(404, { message: `no workload for job ${ns}/${name}` }, '');
          return list.items[0];
        }
        return M.api.get(`${VIEWS}/namespaces/${encodeURIComponent(ns)}/workloadviews/${encodeURIComponent(name)}`);
      }

      async function loadPods(jobName) {
        if (podSelector) {
          return (await M.api.get(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods?labelSelector=${encodeURIComponent(podSelector)}`)).items;
        }
        for (const label of POD_LABELS) {
          const sel = `${label}=${jobName}`;
          const items = (await M.api.get(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods?labelSelector=${encodeURIComponent(sel)}`)).items;
          if (items.length) {
            podSelector = sel;
            return items;
          }
        }
        return [];
      }

      function renderHead(w, wl) {
        const owner = ((wl && wl.metadata.ownerReferences) || [])[0];
        M.replace(head,
          M.h('div', { class: 'headerline' },
            M.h('h1', {}, w.job.name, M.h('small', { text: `${w.job.kind} in ${w.metadata.namespace}` })),
            M.badge(w.inadmissible ? 'Inadmissible' : w.state)),
          M.h('p', { class: 'subtitle' }, `Workload ${w.metadata.name}`,
            owner ? ` · owned by ${owner.apiVersion} ${owner.kind}` : '',
            ' · ', M.h('a', { href: '#/workloads?queue=' + encodeURIComponent(w.queue.clusterQueue || ''), text: 'queue ' + (w.queue.clusterQueue || '–') })));
      }

      function renderWhy(w) {
        M.clear(why);
        if (w.state === 'Running' || w.state === 'Succeeded') {
          if (w.state === 'Running') why.append(M.h('div', { class: 'callout ok', text: `Running on ${new Set((w.placement || []).map((p) => p.node)).size} node(s) since ${M.dateTime(w.startTime)}.` }));
          return;
        }
        const box = M.h('div', { class: 'callout' + (w.state === 'Failed' ? ' bad' : '') });
        box.append(M.h('b', { text: w.state === 'Failed' ? 'Failed: ' : 'Why it waits: ' }), w.message || w.reason || 'waiting for the next scheduling cycle');
        if (w.positionInClusterQueue !== undefined) {
          box.append(M.h('div', { class: 'small', text: `Position ${w.positionInClusterQueue + 1} in ClusterQueue ${w.queue.clusterQueue}` +
            (w.positionInLocalQueue !== undefined ? `, ${w.positionInLocalQueue + 1} in LocalQueue ${w.queue.localQueue}` : '') +
            (w.inadmissible ? ' · inadmissible until capacity changes' : '') }));
        }
        why.append(box);
        if ((w.shortfall || []).length) {
          why.append(M.section('Missing quota',
            table('shortfall-table', ['Flavor', 'Resource', 'Requested#', 'Available#', 'Missing#'], w.shortfall.map((s) => M.h('tr', {},
              M.h('td', { text: s.flavor || '–' }), M.h('td', { text: s.resource }),
              M.h('td', { class: 'num', text: M.formatQuantity(s.resource, s.requested) }),
              M.h('td', { class: 'num', text: M.formatQuantity(s.resource, s.available) }),
              M.h('td', { class: 'num', text: M.formatQuantity(s.resource, s.missing) })))),
            M.h('p', { class: 'small muted', text: 'Per flavor the queue could assign: what the whole gang asks for against what the queue can still use, borrowing included.' })));
        }
        if ((w.preemptionCandidates || []).length) {
          why.append(M.section('Preemption candidates',
            table('candidates-table', ['Workload', 'ClusterQueue', 'Priority#', 'Reason', 'Being preempted'], w.preemptionCandidates.map((c) => {
              const [cns, cjob] = c.workload.split('/');
              return M.h('tr', {},
                M.h('td', {}, cjob ? M.h('a', { href: `#/job/${encodeURIComponent(cns)}/${encodeURIComponent(cjob)}`, text: c.workload }) : M.h('span', { class: 'muted', text: c.workload })),
                M.h('td', { text: c.clusterQueue }), M.h('td', { class: 'num', text: c.priority }),
                M.h('td', { text: c.reason }), M.h('td', { text: c.preempting ? 'yes' : 'no' }));
            })),
            M.h('p', { class: 'small muted', text: 'Admitted workloads the queue\'s preemption policy would let this one evict (same queue first, lowest priority first).' })));
        }
      }

      function renderSummary(w) {
        const req = Object.entries(w.requests || {}).map(([k, v]) => `${M.shortResource(k)} ${M.formatQuantity(k, v)}`).join(', ');
        const flavors = [...new Set(Object.values(w.flavors || {}))].join(', ');
        M.replace(summary, dl([
          ['State', M.badge(w.state)],
          ['Queue', `${w.queue.localQueue || '–'} → ${w.queue.clusterQueue || '–'}${w.queue.cohort ? ' (cohort ' + w.queue.cohort + ')' : ''}`],
          ['Priority', `${w.priority}${w.priorityClassName ? ' (' + w.priorityClassName + ')' : ''}`],
          ['Pods', `${w.pods}${w.minPods && w.minPods !== w.pods ? ' (gang of at least ' + w.minPods + ')' : ''}`],
          ['Requests', req || '–'],
          flavors ? ['Flavors', flavors] : null,
          ['Submitted', M.dateTime(w.submitTime)],
          w.admitTime ? ['Admitted', M.dateTime(w.admitTime)] : null,
          w.startTime ? ['Started', M.dateTime(w.startTime)] : null,
          w.finishTime ? ['Finished', M.dateTime(w.finishTime)] : null,
          (w.evictions || []).length ? ['Evictions', w.evictions.map((e) => `${M.clock(e.time)} ${e.reason}${e.detail ? ' (' + e.detail + ')' : ''}${e.by ? ' by ' + e.by : ''}`).join('; ')] : null,
          w.failures ? ['Failures', String(w.failures)] : null,
        ]));
      }

      function renderPods(w, podList) {
        const rank = (p) => {
          const l = p.metadata.labels || {};
          return l['training.kubeflow.org/replica-index'] || l['batch.kubernetes.io/job-completion-index'] || (p.metadata.annotations || {})['muster.dev/rank'] || '';
        };
        const rows = [];
        const placed = w.placement || [];
        const seen = new Set();
        for (const pl of placed) {
          const pod = podList.find((p) => (p.metadata.labels || {})['muster.dev/pod-set'] === pl.podSet &&
            String(rank(p) || p.metadata.name.split('-').pop()) === String(pl.index));
          if (pod) seen.add(pod.metadata.name);
          rows.push(M.h('tr', {},
            M.h('td', { class: 'mono', text: pod ? pod.metadata.name : `${pl.podSet}-${pl.index}` }),
            M.h('td', { text: pl.podSet }), M.h('td', { class: 'num', text: pl.index }),
            M.h('td', { text: pl.node }), M.h('td', { class: 'mono', text: (pl.gpus || []).join(',') || '–' }),
            M.h('td', { class: 'num', text: pl.numaZone !== undefined ? pl.numaZone : '–' }),
            M.h('td', {}, M.badge(podPhase(pod)))));
        }
        for (const p of podList) {
          if (seen.has(p.metadata.name)) continue;
          rows.push(M.h('tr', {}, M.h('td', { class: 'mono', text: p.metadata.name }), M.h('td', { text: (p.metadata.labels || {})['muster.dev/pod-set'] || '–' }),
            M.h('td', { class: 'num', text: rank(p) || '–' }), M.h('td', { text: (p.spec || {}).nodeName || '–' }), M.h('td', { text: '–' }), M.h('td', { text: '–' }),
            M.h('td', {}, M.badge(podPhase(p)))));
        }
        M.clear(pods);
        if (!rows.length) {
          pods.append(M.empty(w.state === 'Pending' ? 'No pods yet: the gang starts once it is admitted and placed.' : 'No pods.'));
          return;
        }
        pods.append(table('pods-table', ['Pod', 'Pod set', 'Rank#', 'Node', 'GPUs', 'NUMA zone#', 'Phase'], rows));
      }

      function renderConditions(wl) {
        const conds = (wl && wl.status && wl.status.conditions) || [];
        M.clear(conditions);
        if (!conds.length) {
          conditions.append(M.empty('No conditions yet.'));
          return;
        }
        conditions.append(table('conditions-table', ['Type', 'Status', 'Reason', 'Message', 'Since'], conds.map((c) => M.h('tr', {},
          M.h('td', { text: c.type }), M.h('td', { text: c.status }), M.h('td', { text: c.reason || '' }),
          M.h('td', { class: 'small', text: c.message || '' }), M.h('td', { class: 'num muted', text: M.since(c.lastTransitionTime) })))));
      }

      function renderEvents(list) {
        M.clear(events);
        const items = (list || []).slice().sort((a, b) => String(b.lastTimestamp || b.eventTime || '').localeCompare(String(a.lastTimestamp || a.eventTime || '')));
        if (!items.length) {
          events.append(M.empty('No events.'));
          return;
        }
        events.append(table('events-table', ['Time', 'Type', 'Reason', 'Message'], items.slice(0, 50).map((e) => M.h('tr', {},
          M.h('td', { class: 'mono', text: M.clock(e.lastTimestamp || e.eventTime || e.firstTimestamp) }), M.h('td', { text: e.type || '' }),
          M.h('td', { text: e.reason || '' }), M.h('td', { class: 'small', text: e.message || '' })))));
      }

      function renderDecisions(w) {
        M.clear(decisions);
        const list = (w.decisions || []).slice().reverse();
        if (!list.length) {
          decisions.append(M.empty('No decisions recorded.'));
          return;
        }
        decisions.append(table('decisions-table', ['Time', 'Action', 'Reason', 'Message'], list.map((d) => M.h('tr', {},
          M.h('td', { class: 'mono', text: M.clock(d.time) }), M.h('td', { class: 'act act-' + d.action.toLowerCase(), text: d.action }),
          M.h('td', { text: d.reason || '' }), M.h('td', { class: 'small', text: d.message || '' })))));
      }

      async function loadLog(pod, pre) {
        try {
          const text = await M.api.text(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log?tailLines=40`);
          M.setText(pre, text || '(no output yet)');
        } catch (e) {
          M.setText(pre, e.status === 404 ? '(no log yet)' : 'cannot read the log: ' + e.message);
        }
      }

      function renderLogs(podList) {
        const names = podList.map((p) => p.metadata.name).sort();
        if (logs.dataset.k !== names.join(',')) {
          logs.dataset.k = names.join(',');
          M.clear(logs);
          if (!names.length) logs.append(M.empty('No pods, no logs.'));
          names.forEach((n, i) => {
            const pre = M.h('pre', { class: 'log', 'data-pod': n, text: 'loading…' });
            const d = M.h('details', { open: i < LOG_PODS }, M.h('summary', { class: 'mono', text: n }), pre);
            if (i < LOG_PODS) openLogs.add(n);
            d.addEventListener('toggle', () => {
              if (d.open) {
                openLogs.add(n);
                loadLog(n, pre);
              } else openLogs.delete(n);
            });
            logs.append(d);
          });
        }
        for (const pre of logs.querySelectorAll('pre.log')) if (openLogs.has(pre.dataset.pod)) loadLog(pre.dataset.pod, pre);
      }

      async function load() {
        try {
          view = await findView();
        } catch (e) {
          M.replace(head, M.h('h1', { text: name }), M.errorBox(e));
          return;
        }
        const w = view;
        const wlName = w.metadata.name;
        const [wl, podList, evs] = await Promise.all([
          M.api.get(`/apis/kueue.x-k8s.io/v1beta1/namespaces/${encodeURIComponent(ns)}/workloads/${encodeURIComponent(wlName)}`).catch(() => null),
          loadPods(w.job.name).catch((e) => { pods.append(M.errorBox(e)); return []; }),
          M.api.get(`/api/v1/namespaces/${encodeURIComponent(ns)}/events?fieldSelector=${encodeURIComponent('involvedObject.name=' + w.job.name)}`)
            .then((l) => l.items).catch(() => []),
        ]);
        renderHead(w, wl);
        renderWhy(w);
        renderSummary(w);
        renderConditions(wl);
        renderPods(w, podList);
        renderEvents(evs);
        renderDecisions(w);
        renderLogs(podList);
        document.body.dataset.jobReady = '1';
        if (!watches.length) {
          const refresh = M.throttle(load, 800);
          const n = encodeURIComponent(ns);
          watches = [
            new M.Watch(`/apis/kueue.x-k8s.io/v1beta1/namespaces/${n}/workloads?fieldSelector=${encodeURIComponent('metadata.name=' + wlName)}`, refresh, { onResync: refresh }),
            new M.Watch(`/api/v1/namespaces/${n}/pods` + (podSelector ? `?labelSelector=${encodeURIComponent(podSelector)}` : ''), refresh, { onResync: refresh }),
            new M.Watch(`/api/v1/namespaces/${n}/events?fieldSelector=${encodeURIComponent('involvedObject.name=' + w.job.name)}`, refresh, { onResync: refresh }),
          ];
        }
      }
      load();
      return { unmount() { watches.forEach((x) => x.stop()); } };
    },
  };
  M.pages.job = Object.assign({}, M.pages.workload);
})();
