import { AppError } from '@mcp-fleet/kit';
import type { Confinement } from '@mcp-fleet/sandbox';
import { engineMessage, runProgram, type RunOptions } from './engines';

/**
 * Demuxers ffmpeg may use on a caller's file. Playlists and concat lists (hls, concat, image2
 * patterns...) are left out: they would open further files or URLs named inside the input.
 */
export const DEMUXERS = [
  'mov',
  'matroska',
  'avi',
  'flv',
  'mpegts',
  'mpeg',
  'ogg',
  'wav',
  'w64',
  'mp3',
  'flac',
  'aac',
  'asf',
  'aiff',
  'au',
  'caf',
  'amr',
  'ac3',
  'eac3',
  'dts',
  'truehd',
  'mxf',
  'nut',
  'ivf',
  'h264',
  'hevc',
  'm4v',
  'wv',
  'ape',
  'tta',
  'dv',
  'gif',
].join(',');

/** Every ffmpeg run: no stdin, no banner or stats line, info-level log (ebur128's summary is info). */
export const FFMPEG_BASE = ['-nostdin', '-hide_banner', '-nostats', '-v', 'info'];

/** ffmpeg/ffprobe arguments that open a caller's file safely: local files only, known demuxers only. */
export function inputArgs(file: string): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', DEMUXERS, '-i', `file:${file}`];
}

export interface Programs {
  ffmpeg: string;
  ffprobe: string;
  /** Both run inside the OS sandbox, reading only the workspace roots and the scratch folder. */
  confinement: Confinement;
}

export interface StreamInfo {
  index: number;
  type: string;
  codec?: string;
  codecLongName?: string;
  profile?: string;
  width?: number;
  height?: number;
  pixelFormat?: string;
  frameRate?: number;
  sampleRate?: number;
  channels?: number;
  channelLayout?: string;
  bitRate?: number;
  duration?: number;
  language?: string;
  attachedPicture?: boolean;
}

export interface Probe {
  kind: 'audio' | 'video';
  container: string;
  containerLongName?: string;
  duration?: number;
  bitRate?: number;
  size?: number;
  streams: StreamInfo[];
  tags?: Record<string, string>;
}

interface RawStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  codec_long_name?: string;
  profile?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  bit_rate?: string;
  duration?: string;
  tags?: Record<string, string>;
  disposition?: Record<string, number>;
}

const num = (v: string | number | undefined): number | undefined => {
  const n = typeof v === 'number' ? v : v === undefined ? NaN : Number(v);
  return Number.isFinite(n) ? n : undefined;
};

function rate(v: string | undefined): number | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(v ?? '');
  if (!m || Number(m[2]) === 0 || Number(m[1]) === 0) return undefined;
  return Math.round((Number(m[1]) / Number(m[2])) * 1000) / 1000;
}

function undecodable(source: string, why: string): AppError {
  return new AppError(
    'VALIDATION_ERROR',
    `${source} is not a media file this service reads (${why}); send an image, audio or video file.`,
    {
      details: [{ path: 'input', message: 'unrecognised or corrupt media' }],
    },
  );
}

const SHOWN_TAGS = ['title', 'artist', 'album', 'date', 'encoder', 'comment', 'creation_time', 'language'];

export async function probe(programs: Programs, file: string, source: string, options: RunOptions = {}): Promise<Probe> {
  const res = await runProgram(
    programs.ffprobe,
    ['-v', 'error', '-hide_banner', '-print_format', 'json', '-show_format', '-show_streams', ...inputArgs(file)],
    { timeoutMs: 60_000, ...options, confinement: programs.confinement },
  );
  if (res.code !== 0) throw undecodable(source, engineMessage(res.stderr, 2));
  let json: { format?: Record<string, unknown> & { tags?: Record<string, string> }; streams?: RawStream[] };
  try {
    json = JSON.parse(res.stdout);
  } catch {
    throw undecodable(source, 'ffprobe gave no readable description');
  }
  const streams: StreamInfo[] = (json.streams ?? []).map((s) => {
    const type = s.codec_type ?? 'unknown';
    const out: StreamInfo = { index: s.index, type };
    if (s.codec_name) out.codec = s.codec_name;
    if (s.codec_long_name) out.codecLongName = s.codec_long_name;
    if (s.profile) out.profile = s.profile;
    if (type === 'video') {
      out.width = s.width;
      out.height = s.height;
      if (s.pix_fmt) out.pixelFormat = s.pix_fmt;
      const fr = rate(s.avg_frame_rate) ?? rate(s.r_frame_rate);
      if (fr) out.frameRate = fr;
      if (s.disposition?.attached_pic) out.attachedPicture = true;
    }
    if (type === 'audio') {
      out.sampleRate = num(s.sample_rate);
      out.channels = s.channels;
      if (s.channel_layout) out.channelLayout = s.channel_layout;
    }
    const br = num(s.bit_rate);
    if (br) out.bitRate = br;
    const d = num(s.duration);
    if (d !== undefined) out.duration = d;
    const lang = s.tags?.language;
    if (lang && lang !== 'und') out.language = lang;
    return out;
  });
  const media = streams.filter((s) => s.type === 'audio' || (s.type === 'video' && !s.attachedPicture));
  if (media.length === 0) throw undecodable(source, 'no audio or video stream found');
  const f = json.format ?? {};
  const tags = Object.fromEntries(
    Object.entries(f.tags ?? {})
      .filter(([k]) => SHOWN_TAGS.includes(k.toLowerCase()))
      .map(([k, v]) => [k, String(v).slice(0, 500)]),
  );
  return {
    kind: media.some((s) => s.type === 'video') ? 'video' : 'audio',
    container: String(f.format_name ?? 'unknown'),
    ...(f.format_long_name ? { containerLongName: String(f.format_long_name) } : {}),
    ...(num(f.duration as string) !== undefined ? { duration: num(f.duration as string) } : {}),
    ...(num(f.bit_rate as string) ? { bitRate: num(f.bit_rate as string) } : {}),
    ...(num(f.size as string) ? { size: num(f.size as string) } : {}),
    streams,
    ...(Object.keys(tags).length ? { tags } : {}),
  };
}

export interface Loudness {
  /** EBU R128 integrated loudness, LUFS. */
  integratedLufs: number | null;
  /** Loudness range, LU. */
  rangeLu: number | null;
  /** True peak, dBTP (null for digital silence). */
  truePeakDbtp: number | null;
  thresholdLufs: number | null;
}

function field(section: string, label: string): number | null {
  const m = new RegExp(`${label}:\\s*(-?(?:\\d+(?:\\.\\d+)?|inf))`).exec(section);
  if (!m || m[1] === '-inf' || m[1] === 'inf') return null;
  return Number(m[1]);
}

/** Parses the Summary block ffmpeg's ebur128 filter prints at the end. */
export function parseEbur128(stderr: string): Loudness | undefined {
  const at = stderr.lastIndexOf('Summary:');
  if (at < 0) return undefined;
  const s = stderr.slice(at);
  const integrated = /Integrated loudness:([\s\S]*?)Loudness range:/.exec(s)?.[1] ?? '';
  const range = /Loudness range:([\s\S]*?)(True peak:|$)/.exec(s)?.[1] ?? '';
  const peak = /True peak:([\s\S]*)/.exec(s)?.[1] ?? '';
  return {
    integratedLufs: field(integrated, 'I'),
    thresholdLufs: field(integrated, 'Threshold'),
    rangeLu: field(range, 'LRA'),
    truePeakDbtp: field(peak, 'Peak'),
  };
}

/** EBU R128 loudness and true peak of the first audio stream, through ffmpeg's ebur128 filter. */
export async function measureLoudness(programs: Programs, file: string, source: string, options: RunOptions = {}): Promise<Loudness> {
  const res = await runProgram(
    programs.ffmpeg,
    [
      ...FFMPEG_BASE,
      ...inputArgs(file),
      '-map',
      '0:a:0',
      '-vn',
      '-sn',
      '-dn',
      '-af',
      'ebur128=peak=true:framelog=verbose',
      '-f',
      'null',
      '-',
    ],
    { timeoutMs: 10 * 60_000, ...options, confinement: programs.confinement },
  );
  const loudness = res.code === 0 ? parseEbur128(res.stderr) : undefined;
  if (!loudness) throw undecodable(source, `loudness could not be measured: ${engineMessage(res.stderr, 2)}`);
  return loudness;
}

export interface AvAnalysis extends Probe {
  loudness?: Loudness;
}

export async function analyzeAv(
  programs: Programs,
  file: string,
  source: string,
  options: RunOptions & { loudness?: boolean } = {},
): Promise<AvAnalysis> {
  const probed = await probe(programs, file, source, options);
  const hasAudio = probed.streams.some((s) => s.type === 'audio');
  if (!hasAudio || options.loudness === false) return probed;
  return { ...probed, loudness: await measureLoudness(programs, file, source, options) };
}
