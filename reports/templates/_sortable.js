// Sorts a table by the clicked column: numbers by data-value (empty cells last), text
// alphabetically; a second click reverses. No external code.
(function () {
  "use strict";
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-value");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortBy(table, th, index) {
    var numeric = th.getAttribute("data-type") === "num";
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (numeric) {
        if (x === "" || y === "") { return (x === "") - (y === ""); }
        var d = parseFloat(x) - parseFloat(y);
        return ascending ? d : -d;
      }
      var c = x.localeCompare(y);
      return ascending ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable-table"), function (t) {
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, i) {
      if (th.classList.contains("sortable")) {
        th.addEventListener("click", function () { sortBy(t, th, i); });
      }
    });
  });
}());
