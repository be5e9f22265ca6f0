/*
 * site.js - the one script of slurm-report's enhanced pages (NAME.js.html). It adds
 * what a static page cannot do alone: tables sorted by a click on a column header
 * (numbers by their exact value, data-v; total rows stay last), a filter box over
 * every longer table, and chart values shown at once on hover (every bar, point and
 * line carries its value in a <title>). Nothing is fetched; without this script the
 * page is the plain one. Written for slurm-archive; embedded into slurm-report.
 */
(function () {
  'use strict';

  var css = 'th.sortable { cursor: pointer; }\n' +
    'th[aria-sort="ascending"]::after { content: " \\25B2"; font-size: 0.7em; }\n' +
    'th[aria-sort="descending"]::after { content: " \\25BC"; font-size: 0.7em; }\n' +
    'input.filter { margin: 0.3em 0; padding: 0.15em 0.4em; width: 14em; max-width: 90%; }\n' +
    '#sa-tip { position: absolute; pointer-events: none; background: #222; color: #fff; font: 12px sans-serif;' +
    ' padding: 0.25em 0.5em; border-radius: 3px; white-space: nowrap; display: none; z-index: 10; }\n' +
    'svg.chart .hover { opacity: 0.7; }\n';

  /* The value a cell sorts by: its data-v as a number, else its text. */
  function cellValue(td, numeric) {
    if (!td) {
      return numeric ? -Infinity : '';
    }
    if (numeric) {
      var v = parseFloat(td.getAttribute('data-v'));
      return isNaN(v) ? -Infinity : v;
    }
    return td.textContent;
  }

  /* Sorts the rows of table by column col (th its header): descending first for numbers. */
  function sortTable(table, col, th) {
    var tbody = table.tBodies[0];
    var numeric = th.classList.contains('n');
    var was = th.getAttribute('aria-sort');
    var dir = was ? (was === 'ascending' ? 'descending' : 'ascending') : (numeric ? 'descending' : 'ascending');
    var rows = Array.prototype.slice.call(tbody.rows);
    var body = rows.filter(function (r) { return !r.classList.contains('total') && r.cells.length > 1; });
    var rest = rows.filter(function (r) { return body.indexOf(r) < 0; });

    body.sort(function (a, b) {
      var x = cellValue(a.cells[col], numeric);
      var y = cellValue(b.cells[col], numeric);
      var c = numeric ? (x < y ? -1 : x > y ? 1 : 0) : String(x).localeCompare(String(y));
      return dir === 'ascending' ? c : -c;
    });
    body.concat(rest).forEach(function (r) { tbody.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
  }

  /* Makes every header of table sort it (click, Enter or Space). */
  function sortable(table) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head || !table.tBodies[0]) {
      return;
    }
    Array.prototype.forEach.call(head.cells, function (th, col) {
      th.classList.add('sortable');
      th.tabIndex = 0;
      th.title = 'sort by ' + th.textContent;
      th.addEventListener('click', function () { sortTable(table, col, th); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          sortTable(table, col, th);
        }
      });
    });
  }

  /* A filter box over a table of more than 5 rows: rows without the text are hidden (totals stay). */
  function filterable(table) {
    var tbody = table.tBodies[0];
    var box = table.parentNode;
    var input;
    if (!tbody || tbody.rows.length <= 5 || !box || !box.parentNode) {
      return;
    }
    input = document.createElement('input');
    input.type = 'search';
    input.className = 'filter';
    input.placeholder = 'filter rows';
    input.setAttribute('aria-label', 'filter the rows of the table below');
    input.addEventListener('input', function () {
      var q = input.value.toLowerCase();
      Array.prototype.forEach.call(tbody.rows, function (r) {
        r.hidden = !r.classList.contains('total') && q !== '' && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
    box.parentNode.insertBefore(input, box);
  }

  /* Chart values at once on hover: the <title> of the element under the pointer, in a tip. */
  function tooltips() {
    var tip = document.createElement('div');
    var shown = null;
    tip.id = 'sa-tip';
    document.body.appendChild(tip);
    document.addEventListener('mouseover', function (e) {
      var el = e.target;
      var t = el && el.closest && el.closest('svg.chart') && el.querySelector ? el.querySelector(':scope > title') : null;
      if (shown) {
        shown.classList.remove('hover');
        shown = null;
      }
      if (!t || el.tagName.toLowerCase() === 'svg') {
        tip.style.display = 'none';
        return;
      }
      shown = el;
      el.classList.add('hover');
      tip.textContent = t.textContent;
      tip.style.display = 'block';
    });
    document.addEventListener('mousemove', function (e) {
      if (tip.style.display === 'block') {
        tip.style.left = (e.pageX + 12) + 'px';
        tip.style.top = (e.pageY + 12) + 'px';
      }
    });
  }

  function start() {
    var style = document.createElement('style');
    style.textContent = css;
    document.head.appendChild(style);
    Array.prototype.forEach.call(document.querySelectorAll('table'), function (table) {
      sortable(table);
      filterable(table);
    });
    tooltips();
    document.documentElement.classList.add('enhanced');
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
}());
