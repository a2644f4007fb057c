const { Pool } = require('undici');
const http = require('http');
(async () => {
  const srv = http.createServer((req, res) => setTimeout(() => res.end('{"a":1}'), 300)).listen(0);
  await new Promise(r => srv.once('listening', r));
  const p = new Pool('http://127.0.0.1:' + srv.address().port);
  const ac = new AbortController(); const mark = new Error('mark'); mark.name='X';
  setTimeout(() => ac.abort(mark), 50);
  try { await p.request({ method: 'GET', path: '/', signal: ac.signal }); } catch (e) { console.log('abort', e === mark, e.name, e.code, e.message); }
  const p2 = new Pool('http://127.0.0.1:1');
  try { await p2.request({ method: 'GET', path: '/' }); } catch (e) { console.log('refused', e.name, e.code, e.message, e.cause && e.cause.code); }
  const p3 = new Pool('http://no-such-host.invalid:80');
  try { await p3.request({ method: 'GET', path: '/' }); } catch (e) { console.log('dns', e.name, e.code, e.message); }
  srv.close(); p.close(); p2.close(); p3.close();
})();
