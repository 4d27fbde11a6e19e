// The workspace's behaviour: the filter form, sortable tables, the trend chart (ECharts).
// No inline script anywhere (the Content-Security-Policy forbids it): data comes in
// <script type="application/json"> blocks.
"use strict";

function setUpFilters() {
  const form = document.querySelector("form.filters");
  if (!form) return;
  const brand = document.getElementById("brand-select");
  const category = document.getElementById("category-input");
  if (brand) { // a shared link's page shows its one brand, no choice
    brand.addEventListener("change", () => {
      category.value = brand.selectedOptions[0].dataset.category;
    });
  }
  form.addEventListener("submit", () => {
    const boxes = [...form.querySelectorAll(".platform-box")];
    const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
    document.getElementById("platform-input").value = chosen.length === boxes.length ? "" : chosen.join(",");
    for (const input of form.querySelectorAll("input[name], select[name]")) {
      if (input.value === "") input.disabled = true; // a shorter URL; the defaults apply
    }
  });
  for (const box of form.querySelectorAll(".platform-box")) {
    box.addEventListener("change", () => form.requestSubmit());
  }
}

function cellValue(cell) {
  const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
  const number = parseFloat(raw);
  return Number.isNaN(number) ? raw.toLowerCase() : number;
}

function setUpSorting() {
  for (const table of document.querySelectorAll("table.sortable")) {
    const headers = table.querySelectorAll("thead th");
    headers.forEach((header, index) => {
      header.classList.add("sort-handle");
      header.addEventListener("click", () => {
        const body = table.tBodies[0];
        const descending = header.dataset.order !== "desc";
        headers.forEach((h) => delete h.dataset.order);
        header.dataset.order = descending ? "desc" : "asc";
        const rows = [...body.rows];
        rows.sort((a, b) => {
          const x = cellValue(a.cells[index]), y = cellValue(b.cells[index]);
          const order = x < y ? -1 : x > y ? 1 : 0;
          return descending ? -order : order;
        });
        rows.forEach((row) => body.appendChild(row));
      });
    });
  }
}

// One dashed line per day a model changed, naming every platform that changed that day.
function modelChangeMarks(changes) {
  const byDate = new Map();
  for (const c of changes) byDate.set(c.date, [...(byDate.get(c.date) || []), c.platform]);
  return [...byDate].map(([date, platforms]) => ({ xAxis: date, name: [...new Set(platforms)].join(", ") + ": model" }));
}

function trendChart() {
  const element = document.getElementById("trend-chart");
  const source = document.getElementById("trend-data");
  if (!element || !source || typeof echarts === "undefined") return;
  const data = JSON.parse(source.textContent);
  const dates = [...new Set(data.trend.map((r) => r.date))].sort();
  const platforms = [...new Set(data.trend.map((r) => r.platform))].filter((p) => p !== "all").sort();
  const value = (platform, key) => dates.map((d) => {
    const row = data.trend.find((r) => r.date === d && r.platform === platform);
    return row && row[key] !== null ? +(row[key] * 100).toFixed(2) : null;
  });
  const low = value("all", "low"), high = value("all", "high");
  const series = [
    { name: "interval low", type: "line", data: low, stack: "band", lineStyle: { opacity: 0 }, symbol: "none",
      tooltip: { show: false } },
    { name: "95% interval (all)", type: "line", data: high.map((h, i) => (h === null || low[i] === null ? null : +(h - low[i]).toFixed(2))),
      stack: "band", lineStyle: { opacity: 0 }, areaStyle: { color: "rgba(37, 99, 235, 0.18)" }, symbol: "none",
      color: "rgba(37, 99, 235, 0.35)",
      tooltip: { show: false } },
    { name: "All platforms", type: "line", data: value("all", "mention_rate"), lineStyle: { width: 3 },
      color: "#1d4ed8",
      markLine: { symbol: "none", lineStyle: { type: "dashed", color: "#b91c1c" }, label: { formatter: "{b}" },
                  data: modelChangeMarks(data.model_changes) } },
    ...platforms.map((p) => ({ name: p, type: "line", data: value(p, "mention_rate"), symbolSize: 4,
                               lineStyle: { width: 1 } })),
  ];
  const option = {
    animation: false,
    tooltip: { trigger: "axis", valueFormatter: (v) => (v === null || v === undefined ? "–" : v + "%") },
    legend: { data: ["All platforms", "95% interval (all)", ...platforms], top: 0 },
    grid: { left: 48, right: 24, top: 48, bottom: 32 },
    xAxis: { type: "category", data: dates },
    yAxis: { type: "value", min: 0, max: 100, axisLabel: { formatter: "{value}%" } },
    series,
  };
  const chart = echarts.init(element);
  chart.setOption(option);
  charts.set(element.id, { chart, option, element });
  window.addEventListener("resize", () => chart.resize());
}

// Every chart downloads as PNG (ECharts' own image of the canvas) and SVG (the same option drawn
// again by ECharts' SVG renderer, off screen), for a slide.
const charts = new Map();

function download(name, href) {
  const link = document.createElement("a");
  link.href = href;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
}

function setUpChartDownloads() {
  for (const button of document.querySelectorAll("button.chart-download")) {
    button.addEventListener("click", () => {
      const entry = charts.get(button.dataset.chart);
      if (!entry) return;
      const name = (entry.element.dataset.filename || entry.element.id) + "." + button.dataset.format;
      if (button.dataset.format === "png") {
        download(name, entry.chart.getDataURL({ type: "png", pixelRatio: 2, backgroundColor: "#ffffff" }));
        return;
      }
      const svg = echarts.init(null, null, { renderer: "svg", ssr: true, width: entry.element.clientWidth,
                                             height: entry.element.clientHeight });
      svg.setOption({ ...entry.option, backgroundColor: "#ffffff" });
      const url = URL.createObjectURL(new Blob([svg.renderToSVGString()], { type: "image/svg+xml" }));
      svg.dispose();
      download(name, url);
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    });
  }
}

// The Review page: every label confirmed or corrected with one key (outside the note and the
// number fields); a row whose value differs from the machine's is marked as corrected.
function setUpReview() {
  const form = document.getElementById("review-form");
  if (!form) return;
  const radio = (name, value) => form.querySelector(`input[name="${name}"][value="${value}"]`);
  const checked = (name) => form.querySelector(`input[name="${name}"]:checked`);
  const count = document.getElementById("review-count");
  const rank = document.getElementById("review-rank");
  const mark = () => {
    for (const row of form.querySelectorAll("tr[data-field]")) {
      const field = row.dataset.field;
      const input = field === "mention_count" ? count : field === "list_rank" ? rank : checked(field);
      const value = input ? input.value : "";
      row.classList.toggle("corrected", value !== row.dataset.machine);
    }
  };
  const toggle = (name) => {
    const current = checked(name);
    radio(name, current && current.value === "true" ? "false" : "true").checked = true;
  };
  const keys = {
    m: () => toggle("mentioned"),
    r: () => toggle("recommended"),
    p: () => { radio("sentiment", "positive").checked = true; },
    u: () => { radio("sentiment", "neutral").checked = true; },
    n: () => { radio("sentiment", "negative").checked = true; },
    "+": () => { count.value = String((parseInt(count.value, 10) || 0) + 1); },
    "-": () => { count.value = String(Math.max(0, (parseInt(count.value, 10) || 0) - 1)); },
    "0": () => { rank.value = ""; },
    s: () => { document.getElementById("review-skip").value = "true"; form.requestSubmit(); },
    Enter: () => form.requestSubmit(),
  };
  for (let digit = 1; digit <= 9; digit += 1) keys[String(digit)] = () => { rank.value = String(digit); };
  document.getElementById("review-skip-button").addEventListener("click", () => {
    document.getElementById("review-skip").value = "true";
  });
  form.addEventListener("change", mark);
  form.addEventListener("input", mark);
  form.dataset.keys = "ready"; // the keys below work from now on (a test waits for it)
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("textarea, input[type=number], input[type=text], select");
    if (typing || event.ctrlKey || event.metaKey || event.altKey || !(event.key in keys)) return;
    event.preventDefault();
    keys[event.key]();
    mark();
  });
  mark();
}

document.addEventListener("DOMContentLoaded", () => {
  setUpFilters();
  setUpSorting();
  trendChart();
  setUpChartDownloads();
  setUpReview();
});
