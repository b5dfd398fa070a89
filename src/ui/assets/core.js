// muster dashboard: shared pieces (DOM helpers, formatting, the API client with
// watches, the router). Plain browser JavaScript, no framework, nothing fetched from
// anywhere but this server. Pages live in page-*.js and register in M.pages.
'use strict';

(function () {
  const M = (window.M = { pages: {} });

  // ---------- DOM ----------

  // h('tr', {class: 'x', onclick: f}, child, 'text', [more children])
  M.h = function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = v;
        else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
        else if (k === 'style') Object.assign(el.style, v);  // CSSOM: allowed by the CSP
        else el.setAttribute(k, v === true ? '' : v);
      }
    }
    append(el, children);
    return el;
  };
  function append(el, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }
  M.clear = (el) => {
    while (el.firstChild) el.removeChild(el.firstChild);
    return el;
  };
  // Changes the text only when it differs: live updates touch only what changed.
  M.setText = (el, text) => {
    text = text === undefined || text === null ? '' : String(text);
    if (el.textContent !== text) el.textContent = text;
  };
  M.replace = (el, ...children) => {
    M.clear(el);
    append(el, children);
    return el;
  };

  // Rows of a table body keyed by a string: new keys get a row, gone keys lose theirs,
  // existing rows are updated in place (update() should use M.setText) and reordered
  // only when the order changed.
  M.KeyedRows = class {
    constructor(tbody, create, update) {
      this.tbody = tbody;
      this.create = create;
      this.update = update;
      this.rows = new Map();
    }
    sync(items, keyOf) {
      const seen = new Set();
      let prev = null;
      for (const item of items) {
        const key = keyOf(item);
        seen.add(key);
        let row = this.rows.get(key);
        if (!row) {
          row = this.create(item, key);
          row.dataset.key = key;
          this.rows.set(key, row);
        }
        this.update(row, item, key);
        const want = prev ? prev.nextSibling : this.tbody.firstChild;
        if (want !== row) this.tbody.insertBefore(row, want);
        prev = row;
      }
      for (const [key, row] of this.rows) {
        if (!seen.has(key)) {
          row.remove();
          this.rows.delete(key);
        }
      }
    }
  };

  // ---------- formatting ----------

  const SUFFIX = {
    n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6,
  };
  // Kubernetes quantity ("500m", "64Gi", "1e3") -> number; NaN when malformed.
  M.parseQuantity = (q) => {
    if (typeof q === 'number') return q;
    if (typeof q !== 'string') return NaN;
    const m = /^([+-]?[0-9.]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/.exec(q.trim());
    if (!m) return NaN;
    const base = parseFloat(m[1]);
    if (m[2]) return base * Math.pow(10, parseInt(m[2].slice(1), 10));
    return base * SUFFIX[m[3] || ''];
  };
  const trim = (x, digits) => {
    const s = x.toFixed(digits);
    return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
  };
  // A number of `resource` for people: cores, GiB, counts.
  M.formatAmount = (resource, value) => {
    if (!isFinite(value)) return '–';
    if (resource === 'memory' || /storage|memory/.test(resource)) {
      const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
      let u = 0;
      let v = value;
      while (Math.abs(v) >= 1024 && u < units.length - 1) {
        v /= 1024;
        u++;
      }
      return trim(v, v >= 100 || u === 0 ? 0 : 1) + ' ' + units[u];
    }
    if (resource === 'cpu') return trim(value, value < 10 ? 2 : 1);
    return trim(value, 2);
  };
  M.formatQuantity = (resource, q) => M.formatAmount(resource, M.parseQuantity(q));
  M.shortResource = (r) => (r === 'nvidia.com/gpu' ? 'GPU' : r === 'memory' ? 'mem' : r);
  M.percent = (part, whole) => (whole > 0 ? Math.round((100 * part) / whole) + '%' : '–');
  M.number = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));

  M.duration = (seconds) => {
    if (!isFinite(seconds)) return '–';
    seconds = Math.max(0, Math.round(seconds));
    if (seconds < 60) return seconds + 's';
    const m = Math.floor(seconds / 60);
    if (m < 60) return m + 'm' + (seconds % 60 ? (seconds % 60) + 's' : '');
    const h = Math.floor(m / 60);
    if (h < 48) return h + 'h' + (m % 60 ? (m % 60) + 'm' : '');
    return Math.floor(h / 24) + 'd' + (h % 24 ? (h % 24) + 'h' : '');
  };
  M.since = (iso) => (iso ? M.duration((Date.now() - Date.parse(iso)) / 1000) : '–');
  M.clock = (iso) => {
    if (!iso) return '–';
    const d = typeof iso === 'number' ? new Date(iso * 1000) : new Date(iso);
    return d.toLocaleTimeString('en-GB', { hour12: false });
  };
  // "2026-11-24 20:24:14", local time.
  M.dateTime = (iso) => {
    if (!iso) return '–';
    const d = new Date(iso);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  };

  // A stable colour per workload key (the same job has the same colour on every page).
  M.colorFor = (key) => {
    let h = 2166136261;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
    const hue = (h >>> 0) % 360;
    return `hsl(${hue} 62% 52%)`;
  };

  M.stateClass = (state) => 'badge state-' + String(state || 'unknown').toLowerCase();
  M.badge = (state) => M.h('span', { class: M.stateClass(state), text: state || '–' });

  // ---------- API ----------

  const TOKEN_KEY = 'muster.token';
  class ApiError extends Error {
    constructor(status, body, path) {
      const message = (body && body.message) || `HTTP ${status}`;
      super(message);
      this.status = status;
      this.reason = body && body.reason;
      this.path = path;
    }
  }
  M.ApiError = ApiError;

  M.api = {
    token: () => sessionStorage.getItem(TOKEN_KEY) || '',
    setToken: (t) => (t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY)),
    headers() {
      const h = { Accept: 'application/json' };
      const t = this.token();
      if (t) h.Authorization = 'Bearer ' + t;
      return h;
    },
    async get(path) {
      const res = await fetch(path, { headers: this.headers(), credentials: 'same-origin' });
      const text = await res.text();
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch (e) {
        body = { message: text.slice(0, 200) };
      }
      if (!res.ok) {
        const err = new ApiError(res.status, body, path);
        if (res.status === 401) M.auth.needed(err);
        throw err;
      }
      return body;
    },
    async text(path) {
      const res = await fetch(path, { headers: this.headers(), credentials: 'same-origin' });
      if (!res.ok) {
        let body = null;
        try {
          body = JSON.parse(await res.text());
        } catch (e) {
          body = null;
        }
        throw new ApiError(res.status, body, path);
      }
      return res.text();
    },
    // One page of a list: {items, continue, remaining, resourceVersion}.
    async page(path, params) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== '') q.set(k, v);
      const url = q.toString() ? path + (path.includes('?') ? '&' : '?') + q : path;
      const list = await this.get(url);
      return {
        items: list.items || [],
        continue: (list.metadata && list.metadata.continue) || '',
        remaining: (list.metadata && list.metadata.remainingItemCount) || 0,
        resourceVersion: list.metadata && list.metadata.resourceVersion,
      };
    },
    // Every item, page by page (bounded: at most `max` items).
    async all(path, params, max) {
      const items = [];
      let cont = '';
      max = max || 20000;
      do {
        const p = await this.page(path, Object.assign({}, params, { limit: 500, continue: cont }));
        items.push(...p.items);
        cont = p.continue;
      } while (cont && items.length < max);
      return items;
    },
    // The current resourceVersion of the collection at `path`, read with limit=1 (small
    // at any size): a watch started there sees every later change. The watched list
    // itself, since a user may be allowed to read it and nothing else.
    async currentResourceVersion(path) {
      const sep = path.includes('?') ? '&' : '?';
      const list = await this.get(`${path}${sep}limit=1`);
      return (list.metadata && list.metadata.resourceVersion) || '0';
    },
  };

  // ---------- live status ----------

  M.live = {
    watches: new Set(),
    update() {
      const el = document.getElementById('live');
      if (!el) return;
      let state = 'idle';
      let text = 'idle';
      const all = [...this.watches];
      if (all.some((w) => w.state === 'denied')) {
        state = 'denied';
        text = 'not allowed';
      } else if (all.some((w) => w.state === 'error' || w.state === 'connecting')) {
        state = 'reconnecting';
        text = all.some((w) => w.state === 'error') ? 'reconnecting' : 'connecting';
      } else if (all.some((w) => w.state === 'polling')) {
        state = 'polling';
        text = 'polling';
      } else if (all.length) {
        state = 'live';
        text = 'live';
      }
      el.className = 'live live-' + state;
      M.setText(el.lastChild, text);
    },
  };

  // A Kubernetes watch over fetch: newline-delimited JSON events. Resumes from the last
  // resourceVersion seen after a dropped stream (backing off), starts again from now
  // after 410 Gone (calling onResync so the page re-reads), and stops for good on 403
  // (calling onDenied, so a page can fall back to reading again now and then).
  M.Watch = class {
    constructor(path, onEvent, options) {
      this.path = path;
      this.onEvent = onEvent;
      this.options = options || {};
      this.state = 'connecting';
      this.stopped = false;
      this.backoff = 500;
      M.live.watches.add(this);
      M.live.update();
      this.run();
    }
    setState(s) {
      this.state = s;
      M.live.update();
    }
    // A page that can do without the watch (onDenied) re-reads instead: "polling".
    denied() {
      this.setState(this.options.onDenied ? 'polling' : 'denied');
      if (this.options.onDenied) this.options.onDenied();
    }
    stop() {
      this.stopped = true;
      if (this.abort) this.abort.abort();
      M.live.watches.delete(this);
      M.live.update();
    }
    async run() {
      let rv = this.options.resourceVersion;
      while (!this.stopped) {
        try {
          if (!rv) {
            try {
              rv = await M.api.currentResourceVersion(this.path);
            } catch (e) {
              if (e.status === 403 || e.status === 401) return this.denied();
              throw e;
            }
          }
          this.abort = new AbortController();
          const sep = this.path.includes('?') ? '&' : '?';
          const url = `${this.path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`;
          const res = await fetch(url, { headers: M.api.headers(), signal: this.abort.signal });
          if (res.status === 403 || res.status === 401) {
            if (res.status === 401) M.auth.needed(new ApiError(401, null, url));
            return this.denied();
          }
          if (res.status === 410) {
            rv = '';
            if (this.options.onResync) this.options.onResync();
            continue;
          }
          if (!res.ok || !res.body) throw new Error('watch HTTP ' + res.status);
          this.setState('live');
          this.backoff = 500;
          const reader = res.body.getReader();
          const decoder = new TextDecoder();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true });
            let nl;
            while ((nl = buffer.indexOf('\n')) >= 0) {
              const line = buffer.slice(0, nl).trim();
              buffer = buffer.slice(nl + 1);
              if (!line) continue;
              const ev = JSON.parse(line);
              if (ev.type === 'ERROR') {
                const code = ev.object && ev.object.code;
                if (code === 403 || code === 401) return this.denied();  // a proxy refusing mid-stream
                if (code === 410) {
                  rv = '';
                  if (this.options.onResync) this.options.onResync();
                }
                throw new Error('watch ERROR ' + ((ev.object && ev.object.message) || ''));
              }
              const meta = ev.object && ev.object.metadata;
              if (meta && meta.resourceVersion) rv = meta.resourceVersion;
              if (ev.type !== 'BOOKMARK') this.onEvent(ev.type, ev.object);
            }
          }
        } catch (e) {
          if (this.stopped) return;
          this.setState('error');
        }
        if (this.stopped) return;
        await new Promise((r) => setTimeout(r, this.backoff));
        this.backoff = Math.min(this.backoff * 2, 10000);
      }
    }
  };

  // Runs fn at most once per `ms`, and soon after the first call of a burst.
  M.throttle = (fn, ms) => {
    let timer = null;
    let last = 0;
    return () => {
      if (timer) return;
      const wait = Math.max(0, last + ms - Date.now());
      timer = setTimeout(() => {
        timer = null;
        last = Date.now();
        fn();
      }, Math.max(wait, 50));
    };
  };

  // ---------- sign-in ----------

  M.auth = {
    shown: false,
    needed() {
      if (this.shown) return;
      this.shown = true;
      const d = document.getElementById('tokendialog');
      if (d && !d.open) d.showModal();
    },
    init() {
      const d = document.getElementById('tokendialog');
      const input = document.getElementById('tokeninput');
      const button = document.getElementById('signin');
      const label = () => M.setText(button, M.api.token() ? 'Signed in' : 'Sign in');
      button.addEventListener('click', () => {
        input.value = M.api.token();
        d.showModal();
      });
      document.getElementById('tokenform').addEventListener('submit', () => {
        M.api.setToken(input.value.trim());
        this.shown = false;
        label();
        M.router.reload();
      });
      document.getElementById('tokenclear').addEventListener('click', () => {
        M.api.setToken('');
        input.value = '';
        d.close();
        this.shown = false;
        label();
        M.router.reload();
      });
      label();
    },
  };

  // ---------- page scaffolding ----------

  // A section with a title and a body; errors from the API show inside it (a 403 says
  // what RBAC does not let this user read).
  M.section = (title, ...children) =>
    M.h('section', { class: 'card' }, title ? M.h('h2', { text: title }) : null, ...children);
  M.errorBox = (err) => {
    const denied = err && (err.status === 403 || err.status === 401);
    return M.h(
      'div',
      { class: 'error' + (denied ? ' denied' : '') },
      denied ? 'Not allowed: ' : 'Could not load: ',
      (err && err.message) || String(err),
      err && err.path ? M.h('code', { text: ' ' + err.path }) : null,
    );
  };
  M.empty = (text) => M.h('div', { class: 'empty', text });

  M.router = {
    current: null,
    parse() {
      const hash = location.hash.replace(/^#\/?/, '') || 'overview';
      const [path, query] = hash.split('?');
      const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
      return { page: parts[0] || 'overview', args: parts.slice(1), query: new URLSearchParams(query || '') };
    },
    go(hash) {
      if (location.hash === hash) this.reload();
      else location.hash = hash;
    },
    reload() {
      const route = this.parse();
      if (this.current && this.current.unmount) this.current.unmount();
      this.current = null;
      const main = M.clear(document.getElementById('main'));
      const page = M.pages[route.page] || M.pages.overview;
      for (const a of document.querySelectorAll('#nav a')) {
        a.classList.toggle('active', a.dataset.page === (page.nav || route.page));
      }
      document.title = page.title + ' · muster';
      this.current = page.mount(main, route) || null;
    },
  };
})();
