/* Tables on a narrow screen (issue 47; added by book/_ext/rgr_site.py, measured by tests/system/site_check.py).
   - A table that carries an outcome (a column headed verdict, outcome, inside, holds, agrees, ...) keeps that
     column in view: its cells stick to the right edge of the box the table scrolls in (class rgr-outcome).
   - Any table wider than its box says so above it: "scroll sideways" (class rgr-scrolls on the box). */
(function () {
  var OUTCOME = /\b(verdict|outcome|inside|holds?|held|agrees?|passes|prediction held)\b/i;
  function mark(t) {
    var rows = t.querySelectorAll('thead tr'), head = rows.length ? rows[rows.length - 1].children : [];
    var k = -1;
    for (var i = head.length - 1; i >= 0; i--) { if (OUTCOME.test(head[i].textContent)) { k = i; break; } }
    if (k < 0) return;
    t.classList.add('rgr-has-outcome');
    head[k].classList.add('rgr-outcome');
    t.querySelectorAll('tbody tr').forEach(function (tr) {
      var cells = tr.querySelectorAll('th, td');
      if (cells.length === head.length && cells[k]) cells[k].classList.add('rgr-outcome');
    });
  }
  function box(t) {
    for (var p = t.parentElement; p; p = p.parentElement) {
      var ox = getComputedStyle(p).overflowX;
      if (ox === 'auto' || ox === 'scroll') return p;
    }
    return null;
  }
  function update() {
    document.querySelectorAll('table.rgr-table').forEach(function (t) {
      var b = box(t);
      if (b) b.classList.toggle('rgr-scrolls', b.scrollWidth > b.clientWidth + 2);
    });
  }
  function init() {
    document.querySelectorAll('table.rgr-table').forEach(mark);
    update();
    window.addEventListener('resize', update);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
