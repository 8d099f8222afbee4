// ytsched Web UI: the few things the server cannot render.
// * the pool tree's expand/collapse state (kept per tree in localStorage) and the name filter,
//   re-applied after every live refresh so that a refresh never resets the user's view;
// * charts over time (uPlot) fed by /ui/api/history/..., refreshed in place;
// * a "connection lost" note when live refreshes fail;
// * the tree switcher.
// No inline scripts anywhere (the Content-Security-Policy forbids them): everything hangs off
// data- attributes and delegated events.
(function () {
  "use strict";

  const refreshMs = Number(document.body.dataset.refreshMs) || 5000;

  // --- pool tree: collapse and filter -------------------------------------------------------

  function storageKey(tree) {
    return "ytsched.ui.collapsed." + tree;
  }

  function loadCollapsed(tree) {
    try {
      const raw = window.localStorage.getItem(storageKey(tree));
      const names = raw ? JSON.parse(raw) : [];
      return new Set(Array.isArray(names) ? names : []);
    } catch (error) {
      return new Set();
    }
  }

  function saveCollapsed(tree, collapsed) {
    try {
      window.localStorage.setItem(storageKey(tree), JSON.stringify(Array.from(collapsed)));
    } catch (error) {
      // Storage may be disabled: the state then lasts until the page is left.
    }
  }

  let memoryCollapsed = null;

  function collapsedFor(tree) {
    if (memoryCollapsed === null || memoryCollapsed.tree !== tree) {
      memoryCollapsed = { tree: tree, names: loadCollapsed(tree) };
    }
    return memoryCollapsed.names;
  }

  function poolTable() {
    return document.querySelector("table.pools[data-tree]");
  }

  function applyTree() {
    const table = poolTable();
    if (!table || !table.tBodies.length) return;
    const collapsed = collapsedFor(table.dataset.tree);
    const input = document.querySelector("[data-pool-filter]");
    const filter = input ? input.value.trim().toLowerCase() : "";
    const rows = table.tBodies[0].rows;
    if (filter) {
      const parentOf = new Map();
      for (const row of rows) parentOf.set(row.dataset.pool, row.dataset.parent);
      const shown = new Set();
      for (const row of rows) {
        if (!row.dataset.pool.toLowerCase().includes(filter)) continue;
        let name = row.dataset.pool;
        while (name && !shown.has(name)) {
          shown.add(name);
          name = parentOf.get(name);
        }
      }
      for (const row of rows) row.classList.toggle("hidden", !shown.has(row.dataset.pool));
    } else {
      const hidden = new Map();
      for (const row of rows) {
        const parent = row.dataset.parent;
        const isHidden = Boolean(parent) && (hidden.get(parent) || collapsed.has(parent));
        hidden.set(row.dataset.pool, isHidden);
        row.classList.toggle("hidden", isHidden);
      }
    }
    for (const button of table.querySelectorAll("[data-toggle]")) {
      const open = !collapsed.has(button.dataset.toggle);
      button.setAttribute("aria-expanded", String(open));
      button.setAttribute("aria-label", (open ? "collapse " : "expand ") + button.dataset.toggle);
    }
  }

  document.addEventListener("click", function (event) {
    const target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    const table = poolTable();
    const toggle = target.closest("[data-toggle]");
    if (toggle && table) {
      const collapsed = collapsedFor(table.dataset.tree);
      const name = toggle.dataset.toggle;
      if (collapsed.has(name)) collapsed.delete(name);
      else collapsed.add(name);
      saveCollapsed(table.dataset.tree, collapsed);
      applyTree();
      return;
    }
    if (target.closest("[data-expand-all]") && table) {
      const collapsed = collapsedFor(table.dataset.tree);
      collapsed.clear();
      saveCollapsed(table.dataset.tree, collapsed);
      applyTree();
    } else if (target.closest("[data-collapse-all]") && table) {
      const collapsed = collapsedFor(table.dataset.tree);
      for (const button of table.querySelectorAll("[data-toggle]")) {
        collapsed.add(button.dataset.toggle);
      }
      saveCollapsed(table.dataset.tree, collapsed);
      applyTree();
    }
  });

  document.addEventListener("input", function (event) {
    if (event.target instanceof Element && event.target.matches("[data-pool-filter]")) applyTree();
  });

  document.addEventListener("change", function (event) {
    const target = event.target;
    if (target instanceof HTMLSelectElement && target.hasAttribute("data-navigate")) {
      if (target.value.startsWith("/ui/")) window.location.assign(target.value);
    }
  });

  // --- charts -------------------------------------------------------------------------------

  const COLORS = { fair_share: "#2f6fde", usage: "#1a9a4b", demand: "#e3a008", volume: "#7b3fbf", capacity: "#9aa0a6" };
  const KINDS = {
    shares: {
      // Drawn in this order: demand under fair share under usage.
      fields: [["demand", "demand"], ["fair_share", "fair share"], ["usage", "usage"]],
      scale: 100,
      unit: "%",
    },
    volume: {
      fields: [["volume", "accumulated volume"], ["capacity", "capacity"]],
      scale: 1,
      unit: "",
    },
  };

  function formatValue(kind, value) {
    if (value === null || value === undefined || Number.isNaN(value)) return "—";
    return kind.unit === "%" ? value.toFixed(1) + "%" : value.toPrecision(3);
  }

  class Chart {
    constructor(element) {
      this.element = element;
      this.url = element.dataset.chartUrl;
      this.kind = KINDS[element.dataset.chartKind] || KINDS.shares;
      this.plot = null;
      this.load();
      this.timer = window.setInterval(() => this.load(), refreshMs);
      if (window.ResizeObserver) {
        new ResizeObserver(() => this.resize()).observe(element);
      }
    }

    size() {
      const style = window.getComputedStyle(this.element);
      const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
      return { width: Math.max(200, this.element.clientWidth - padding), height: 220 };
    }

    resize() {
      if (this.plot) this.plot.setSize(this.size());
    }

    async load() {
      if (!document.body.contains(this.element)) {
        window.clearInterval(this.timer);
        return;
      }
      let data;
      try {
        const response = await fetch(this.url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
        if (!response.ok) return;
        data = await response.json();
      } catch (error) {
        return;
      }
      this.draw(data);
    }

    draw(data) {
      const kind = this.kind;
      const columns = [data.times || []];
      for (const [field] of kind.fields) {
        const values = data[field] || [];
        columns.push(values.map((v) => (v === null ? null : v * kind.scale)));
      }
      if (!columns[0].length) {
        if (!this.plot) this.element.innerHTML = '<div class="chart-empty">No samples yet.</div>';
        return;
      }
      if (typeof window.uPlot !== "function") return;
      if (this.plot) {
        this.plot.setData(columns);
        return;
      }
      this.element.textContent = "";
      const series = [{}];
      for (const [field, label] of kind.fields) {
        series.push({
          label: label,
          stroke: COLORS[field],
          width: field === "capacity" ? 1 : 2,
          dash: field === "capacity" || field === "demand" ? [6, 4] : undefined,
          value: (u, v) => formatValue(kind, v),
          spanGaps: false,
          points: { show: (u) => u.data[0].length < 3 },
        });
      }
      const options = Object.assign(this.size(), {
        series: series,
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(max || 0, kind.unit === "%" ? 5 : 1e-9) * 1.05] } },
        axes: [{}, { size: 56, values: (u, splits) => splits.map((v) => formatValue(kind, v)) }],
        cursor: { drag: { x: false, y: false } },
      });
      this.plot = new window.uPlot(options, columns, this.element);
      this.element.dataset.points = String(columns[0].length);
    }
  }

  function initCharts(root) {
    for (const element of root.querySelectorAll(".chart[data-chart-url]:not([data-ready])")) {
      element.dataset.ready = "1";
      element.chart = new Chart(element);
    }
  }

  // --- live refresh status ------------------------------------------------------------------

  function setStatus(text, stale) {
    const status = document.getElementById("live-status");
    if (!status) return;
    status.textContent = text;
    status.classList.toggle("stale", stale);
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    applyTree();
    if (event.target instanceof Element) initCharts(event.target);
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail && event.detail.successful) {
      setStatus("· updated " + new Date().toLocaleTimeString(), false);
    }
  });
  for (const name of ["htmx:sendError", "htmx:responseError", "htmx:timeout"]) {
    document.addEventListener(name, function () {
      setStatus("· connection lost: showing the last data received", true);
    });
  }

  function start() {
    applyTree();
    initCharts(document);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
