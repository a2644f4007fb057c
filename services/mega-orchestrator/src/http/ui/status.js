// The gateway status page: re-fetches the server's rendering of <main> and swaps it in, keeping the
// catalog entries a person opened. No framework, no CDN.
(function () {
  'use strict';
  var main = document.getElementById('main');
  var every = Number(document.body.getAttribute('data-refresh-ms')) || 2000;
  function refresh() {
    var open = Array.prototype.map.call(document.querySelectorAll('details[open]'), function (d) {
      return d.getAttribute('data-tool');
    });
    fetch('/?fragment=1', { headers: { accept: 'text/html' }, cache: 'no-store' })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.text();
      })
      .then(function (html) {
        main.innerHTML = html;
        open.forEach(function (name) {
          var d = document.querySelector('details[data-tool="' + window.CSS.escape(name) + '"]');
          if (d) d.open = true;
        });
        document.body.classList.remove('stale');
      })
      .catch(function () {
        document.body.classList.add('stale');
      })
      .finally(function () {
        window.setTimeout(refresh, every);
      });
  }
  window.setTimeout(refresh, every);
})();
