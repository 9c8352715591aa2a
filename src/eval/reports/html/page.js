// gisclaw's report page: one view at a time chosen by the URL fragment
// (#report, #runs, #tasks, #run:KEY, #compare:TASK:RUN), transcripts
// copied out of their <template> when opened, and tables sorted by a
// click on a header. No request leaves the page.
(function () {
  "use strict";

  // Views are sections with id "view-NAME" (not "NAME": the browser
  // would scroll to an element named by the fragment).
  function show(name) {
    for (const view of document.querySelectorAll("section.view")) {
      view.hidden = view.id !== "view-" + name;
    }
  }

  function templates() {
    return Array.from(document.querySelectorAll("template[data-task]"));
  }

  function openRun(key) {
    const box = document.getElementById("run-view");
    const t = document.getElementById("t:" + key);
    box.replaceChildren();
    if (t) {
      box.append(t.content.cloneNode(true));
      const link = document.createElement("p");
      const a = document.createElement("a");
      a.href = "#compare:" + t.dataset.task + ":" + t.dataset.run;
      a.textContent = "This task's run " + t.dataset.run + " by every cell, side by side";
      link.append(a);
      box.prepend(link);
    } else {
      box.textContent = "No run " + key + " in this report.";
    }
    show("run");
  }

  function openCompare(task, run) {
    const grid = document.getElementById("compare-grid");
    const runs = document.getElementById("compare-runs");
    grid.replaceChildren();
    runs.replaceChildren();
    const ofTask = templates().filter((t) => t.dataset.task === task);
    const numbers = Array.from(new Set(ofTask.map((t) => t.dataset.run)));
    for (const n of numbers) {
      const a = document.createElement("a");
      a.href = "#compare:" + task + ":" + n;
      a.textContent = "run " + n;
      if (n === run) a.className = "current";
      runs.append(a, " ");
    }
    for (const t of ofTask.filter((t) => t.dataset.run === run)) {
      const column = document.createElement("div");
      const title = document.createElement("h3");
      title.textContent = t.dataset.cell;
      column.append(title, t.content.cloneNode(true));
      grid.append(column);
    }
    const first = ofTask[0];
    document.getElementById("compare-title").textContent = first
      ? first.content.querySelector("h2").textContent.split(" · ")[0] + ", run " + run
      : "No such task in this report.";
    show("compare");
  }

  function route() {
    const hash = decodeURIComponent(location.hash.slice(1));
    if (hash.startsWith("run:")) {
      openRun(hash.slice(4));
    } else if (hash.startsWith("compare:")) {
      const [task, run] = hash.slice(8).split(":");
      openCompare(task, run);
    } else {
      show(["runs", "tasks"].includes(hash) ? hash : "report");
    }
    window.scrollTo(0, 0);
  }

  function sortKey(cell) {
    const text = cell.textContent.trim();
    const m = text.replace(/[$,]/g, "").match(/^[^\d-]*(-?\d+(\.\d+)?)/);
    return m ? { n: parseFloat(m[1]), s: text } : { n: NaN, s: text };
  }

  function sortable(table) {
    const head = table.tHead;
    if (!head || !table.tBodies[0]) return;
    Array.from(head.rows[0].cells).forEach((th, col) => {
      th.title = "Sort by this column";
      th.addEventListener("click", () => {
        const descending = th.getAttribute("aria-sort") === "ascending";
        for (const other of head.rows[0].cells) other.removeAttribute("aria-sort");
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = sortKey(a.cells[col] || a), y = sortKey(b.cells[col] || b);
          let c;
          if (!isNaN(x.n) && !isNaN(y.n)) c = x.n - y.n;
          else if (isNaN(x.n) !== isNaN(y.n)) return isNaN(x.n) ? 1 : -1;
          else c = x.s.localeCompare(y.s, undefined, { numeric: true });
          return descending ? -c : c;
        });
        body.append(...rows);
      });
    });
  }

  for (const table of document.querySelectorAll("section.view table")) sortable(table);
  window.addEventListener("hashchange", route);
  route();
})();
