import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import type { Confinement } from '@mcp-fleet/sandbox';
import { probeProgram, run } from './run';
import type { ChunkOptions, ChunkResult, Engine, Segment } from './types';

/** A timed word line of `pocketsphinx_continuous -time yes`: word, start, end, confidence. */
const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?(?:e-?\d+)?)$/;
/** Markers and fillers that are not words. */
const NOT_A_WORD = /^(<s>|<\/s>|<sil>|\[[A-Z]+\]|\+\+[A-Z]+\+\+|\(NULL\))$/;

/**
 * Reads the timed output of `pocketsphinx_continuous -time yes`: every utterance is a hypothesis
 * line then one line per word, bracketed by <s> and </s>. One segment per utterance; alternate
 * pronunciation marks ("the(2)") and fillers are dropped.
 */
export function parsePocketsphinx(stdout: string): ChunkResult {
  const segments: Segment[] = [];
  let words: { w: string; start: number; end: number }[] = [];
  const flush = () => {
    if (words.length) {
      segments.push({ start: words[0].start, end: words[words.length - 1].end, text: words.map((w) => w.w).join(' ') });
    }
    words = [];
  };
  for (const line of stdout.split('\n')) {
    const m = WORD_LINE.exec(line.trim());
    if (!m) continue;
    const token = m[1];
    if (token === '<s>' || token === '</s>') {
      flush();
      continue;
    }
    if (NOT_A_WORD.test(token)) continue;
    words.push({ w: token.replace(/\(\d+\)$/, ''), start: Number(m[2]), end: Number(m[3]) });
  }
  flush();
  return { text: segments.map((s) => s.text).join(' '), segments, language: 'en' };
}

/** How often a missing engine is looked for again when a call needs it. */
const RECHECK_MS = 5000;

/** The embedded engine: CMU pocketsphinx (Debian pocketsphinx + pocketsphinx-en-us), offline. */
export function pocketsphinxEngine(program: string, modelDir: string, confinement: Confinement): Engine {
  const files = {
    hmm: path.join(modelDir, 'en-us'),
    lm: path.join(modelDir, 'en-us.lm.bin'),
    dict: path.join(modelDir, 'cmudict-en-us.dict'),
  };
  const missingModel = () => Object.values(files).filter((f) => !fs.existsSync(f));
  // The model directory may lie outside /usr (POCKETSPHINX_MODEL_DIR): the engine reads it, nothing more.
  const sandboxed: Confinement = { ...confinement, readOnly: [...(confinement.readOnly ?? []), modelDir] };
  // A program found stays found; a missing one is looked for again (every few seconds at most), so
  // `apt-get install pocketsphinx` takes effect without a restart.
  let probed: Promise<{ ok: boolean; detail: string }> | undefined;
  let probedAt = 0;
  const probe = async () => {
    if (probed && (await probed).ok === false && Date.now() - probedAt >= RECHECK_MS) probed = undefined;
    if (!probed) {
      probedAt = Date.now();
      probed = probeProgram(program, ['-h'], 'pocketsphinx', sandboxed);
    }
    return probed;
  };
  return {
    name: 'pocketsphinx',
    model: `pocketsphinx-en-us (${modelDir})`,
    languages: ['en'],
    async ready() {
      const p = await probe();
      if (!p.ok) throw new AppError('NOT_CONFIGURED', p.detail);
      const missing = missingModel();
      if (missing.length) {
        throw new AppError(
          'NOT_CONFIGURED',
          `The pocketsphinx model is missing (${missing.join(', ')}): apt-get install pocketsphinx-en-us, or set POCKETSPHINX_MODEL_DIR.`,
        );
      }
    },
    async health() {
      await this.ready();
      return { engine: 'pocketsphinx', program, model: modelDir };
    },
    async transcribeChunk(wavFile: string, options: ChunkOptions): Promise<ChunkResult> {
      const args = ['-logfn', '/dev/null', '-time', 'yes', '-hmm', files.hmm, '-lm', files.lm, '-dict', files.dict, '-infile', wavFile];
      const res = await run(program, args, {
        signal: options.signal,
        timeoutMs: options.timeoutMs,
        debianPackage: 'pocketsphinx',
        confinement: sandboxed,
      });
      if (res.code !== 0) {
        throw new AppError(
          'INTERNAL',
          `pocketsphinx exited with ${res.code}: ${res.stderr.trim().split('\n').slice(-2).join('; ').slice(0, 300)}`,
        );
      }
      return parsePocketsphinx(res.stdout);
    },
  };
}
