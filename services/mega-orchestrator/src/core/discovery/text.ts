/**
 * The words of tool search: identifiers split (snake_case, kebab-case, camelCase, digits), lower
 * case, function words dropped, a light suffix stemmer, and a small thesaurus of the words people
 * use for what tools do (a query "what's eating my disk" also looks for usage, space, storage).
 */

/** Function words that say nothing about a tool ("how do I ...", "show me the ..."). */
const STOPWORDS = new Set(
  (
    'a an the of to in on at for from by with into onto about as and or but not no is are was were be been being am do does did ' +
    'done doing have has had having i me my mine we us our you your it its this that these those there here what which who whom ' +
    'whose when where why how can could would should will shall may might must please just also very so then than too some any ' +
    'all each every one ones thing things something anything get got want wanted need needs needed like let lets give tell make ' +
    'i m s t ve re ll d'
  ).split(' '),
);

/** Splits identifiers (file_read, fileRead, HTTPRequest, md5sum, git-mcp) into their words. */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      // camelCase and acronyms: fileRead -> file Read, HTTPRequest -> HTTP Request
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

const VOWEL = /[aeiouy]/;

/**
 * A light stemmer (a few of Porter's first-step rules): plurals, -ing, -ed, a final -e, doubled
 * final consonants, -ly, -ion of long words; enough that delete/deleted/deletion, file/files, process/processes,
 * memory/memories, commit/committed meet. Words of three letters or fewer are left alone.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(?:ss|x|ch|sh|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  let stripped = false;
  for (const suffix of ['ing', 'ed']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3 && VOWEL.test(w.slice(0, -suffix.length))) {
      w = w.slice(0, -suffix.length);
      stripped = true;
      break;
    }
  }
  if (!stripped && w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);
  // the act and its noun meet: deletion/delete, encryption/encrypt, connection/connect, validation/validate
  if (!stripped && w.endsWith('ion') && w.length > 6) w = w.slice(0, -3);
  // committ -> commit, runn -> run (never ss, ll, zz: process, install)
  if (stripped && /([^aeiouslz])\1$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  if (w.endsWith('y') && w.length > 3 && !VOWEL.test(w[w.length - 2])) w = `${w.slice(0, -1)}i`;
  return w;
}

/** The search terms of a text: words, less function words, stemmed. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) if (!STOPWORDS.has(w)) out.push(stem(w));
  return out;
}

/**
 * Words people use for the same act or thing, as they ask for it; a query's words bring the rest
 * of their group in at a lower weight. Generic computing vocabulary, not any one catalog's.
 */
const GROUPS: readonly string[] = [
  'read view show display open cat print see contents',
  'content text body inside',
  'write save put overwrite persist',
  'create new add make register insert',
  'delete remove erase drop rm purge forget discard destroy unregister',
  'list enumerate ls browse inventory',
  'search find lookup look locate grep seek match discover',
  'grep pattern regex regexp substring occurrence',
  'stop cancel abort halt terminate',
  'word phrase string keyword',
  'disk storage space drive volume filesystem mount partition capacity',
  'full eating free space usage',
  'memory ram',
  'cpu processor core load busy utilization',
  'process program running pid daemon',
  'run execute exec shell command terminal bash cmd script invoke',
  'directory folder dir tree',
  'file document',
  'big large size bytes',
  'commit commits revision changeset',
  'history log recent past previous earlier yesterday last',
  'diff difference changed changes compare delta modified',
  'status state dirty uncommitted staged branch clean',
  'push upload sync remote',
  'email mail inbox mailbox letter',
  'send deliver compose reply',
  'forward fwd',
  'label tag flag mark categorize',
  'move relocate archive',
  'password passphrase credential',
  'hash digest bcrypt checksum',
  'encrypt cipher seal protect',
  'decrypt unseal decipher',
  'token jwt bearer claim',
  'certificate cert ssl tls https expiry expire',
  'dns domain resolve hostname record mx',
  'http request fetch url web endpoint api rest',
  'probe ping health latency uptime alive reachable',
  'webhook callback hook inbound',
  'receive incoming inbound delivery',
  'transcribe transcript transcription speech dictation voice recording spoken said',
  'image photo picture thumbnail png jpeg webp',
  'video movie clip mp4 film',
  'audio sound music loudness track mp3',
  'resize crop convert transcode compress shrink rotate trim cut extract',
  'job progress finished queue',
  'research investigate internet online web',
  'paper article academic scholarly arxiv publication study journal',
  'news headline latest trending',
  'citation cite source reference finding evidence',
  'function method class symbol definition',
  'caller callers callee calls',
  'import dependency dependencies depend require module',
  'circular cycle loop cyclic',
  'database db sql postgres mysql sqlite relational',
  'sql statement select insert update upsert',
  'row record entry',
  'schema structure describe columns',
  'sample example preview rows',
  'cache redis ttl expire counter increment',
  'session login',
  'vector embedding similarity nearest neighbour neighbor semantic meaning closest similar',
  'remember memory note memorize recall notes knowledge',
  'context related relevant background',
  'config configuration settings setting conf',
  'environment env variable var',
  'backup copy restore undo rollback',
  'validate verify check lint valid',
  'error errors exception failure anomaly spike unusual warning fault',
  'summary summarize analysis analyze analyse overview statistics stats report',
  'mqtt topic broker iot sensor',
  'subscribe listen follow watch',
  'unsubscribe unfollow',
  'connection connect connected',
  'skill plugin extension addon',
  'review critique audit inspect',
  'debug bug fix troubleshoot diagnose crash crashes',
  'unittest testgen tests coverage',
  'refactor restructure cleanup rewrite simplify',
  'think reason brainstorm deliberate tradeoff',
  'chat ask talk conversation question',
  'trace tracing callgraph',
  'system machine host computer os',
];

const THESAURUS: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, Set<string>>();
  for (const group of GROUPS) {
    const stems = [...new Set(group.split(' ').map(stem))];
    for (const s of stems) {
      const set = map.get(s) ?? new Set<string>();
      for (const other of stems) if (other !== s) set.add(other);
      map.set(s, set);
    }
  }
  return new Map([...map].map(([k, v]) => [k, [...v]]));
})();

/** Names people give files without saying "file". */
const FILE_NAMES = /^(?:readme|makefile|dockerfile|license|changelog|gemfile|procfile|jenkinsfile|vagrantfile)$/i;
/** A word that names a file or a path: notes/todo.md, ./src, config.yaml, README. */
const looksLikeFile = (word: string) => /[\\/]/.test(word) || /^[\w-]*\.[a-z0-9]{1,5}$/i.test(word) || FILE_NAMES.test(word);

/** One word of a query: its term and its thesaurus neighbours with their weight; a tool matching several counts the best once. */
export interface QueryConcept {
  terms: Map<string, number>;
}

/** A query's words, each with its thesaurus neighbours at `related` (the word itself at 1). */
export function queryConcepts(text: string, related = 0.35): QueryConcept[] {
  const own = [...new Set(terms(text))];
  // a file or path named in the query says the query is about files
  if (text.split(/\s+/).some(looksLikeFile)) for (const t of [stem('file'), stem('path')]) if (!own.includes(t)) own.push(t);
  return own.map((t) => {
    const m = new Map<string, number>([[t, 1]]);
    for (const r of THESAURUS.get(t) ?? []) if (!own.includes(r)) m.set(r, related);
    return { terms: m };
  });
}

/** Every term of a query with its highest weight (what the embedder reads). */
export function expandQuery(text: string, related = 0.35): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of queryConcepts(text, related)) for (const [t, w] of c.terms) out.set(t, Math.max(out.get(t) ?? 0, w));
  return out;
}
