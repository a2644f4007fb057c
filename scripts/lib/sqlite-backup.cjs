// Online backup of one SQLite database with the sqlite3 npm package's backup API (used by
// backup-databases.sh when the sqlite3 command-line tool is not installed), then an integrity check
// of the copy. Usage: node sqlite-backup.cjs SOURCE DEST   (prints "ok" or exits 1 with the reason)
'use strict';
const path = require('node:path');

const [source, dest] = process.argv.slice(2);
if (!source || !dest) {
  process.stderr.write('usage: node sqlite-backup.cjs SOURCE DEST\n');
  process.exit(64);
}
const sqlite3 = require(require.resolve('sqlite3', { paths: [path.join(__dirname, '../../packages/kit')] }));

const fail = (what, err) => {
  process.stderr.write(`${what}: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
};

const db = new sqlite3.Database(source, sqlite3.OPEN_READONLY, (err) => {
  if (err) fail(`cannot open ${source}`, err);
  const backup = db.backup(dest, (err) => {
    if (err) fail(`cannot start the backup to ${dest}`, err);
    backup.step(-1, (err) => {
      if (err) fail('backup step failed', err);
      backup.finish((err) => {
        if (err) fail('backup did not finish', err);
        db.close();
        // Read-write: PRAGMA integrity_check of an FTS5 table needs to write (the copy is ours).
        const copy = new sqlite3.Database(dest, sqlite3.OPEN_READWRITE, (err) => {
          if (err) fail(`cannot open the copy ${dest}`, err);
          copy.all('PRAGMA integrity_check', (err, rows) => {
            if (err) fail('integrity check failed to run', err);
            const result = rows.map((r) => r.integrity_check).join('; ');
            copy.close();
            process.stdout.write(`${result}\n`);
            process.exit(result === 'ok' ? 0 : 1);
          });
        });
      });
    });
  });
});
