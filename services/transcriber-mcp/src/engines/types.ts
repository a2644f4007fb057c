export interface Segment {
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  text: string;
}

export interface ChunkResult {
  text: string;
  /** Times relative to the chunk's start. */
  segments: Segment[];
  /** The language the engine reports, when it reports one. */
  language?: string;
}

export interface ChunkOptions {
  language?: string;
  signal?: AbortSignal;
  timeoutMs: number;
}

/** A speech recognizer: one WAV chunk (16 kHz mono) in, text and timed segments out. */
export interface Engine {
  name: 'pocketsphinx' | 'openai-compatible';
  model: string;
  /** Languages it accepts (ISO 639-1), or ['auto'] when the server decides. */
  languages: string[];
  /** Throws NOT_CONFIGURED (naming what to install or set) when it cannot run. */
  ready(): Promise<void>;
  /** What /health shows. */
  health(): Promise<Record<string, unknown>>;
  transcribeChunk(wavFile: string, options: ChunkOptions): Promise<ChunkResult>;
}
