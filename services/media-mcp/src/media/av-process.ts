import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { FFMPEG_BASE, inputArgs, type Probe, type Programs } from './av';
import { engineMessage, runProgram } from './engines';

export const PRESETS = {
  mp4_h264: {
    ext: 'mp4',
    video: true,
    args: [
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '23',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-movflags',
      '+faststart',
    ],
  },
  webm_vp9: {
    ext: 'webm',
    video: true,
    args: [
      '-c:v',
      'libvpx-vp9',
      '-deadline',
      'realtime',
      '-cpu-used',
      '8',
      '-row-mt',
      '1',
      '-b:v',
      '0',
      '-crf',
      '33',
      '-c:a',
      'libopus',
      '-b:a',
      '96k',
    ],
  },
  mp3: { ext: 'mp3', video: false, args: ['-vn', '-c:a', 'libmp3lame', '-q:a', '2'] },
  aac: { ext: 'm4a', video: false, args: ['-vn', '-c:a', 'aac', '-b:a', '160k'] },
  opus: { ext: 'opus', video: false, args: ['-vn', '-c:a', 'libopus', '-b:a', '96k'] },
  flac: { ext: 'flac', video: false, args: ['-vn', '-c:a', 'flac'] },
  wav: { ext: 'wav', video: false, args: ['-vn', '-c:a', 'pcm_s16le'] },
} as const;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as [PresetName, ...PresetName[]];
export const AUDIO_FORMATS = ['mp3', 'aac', 'opus', 'flac', 'wav'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

export type AvOperation =
  | { operation: 'transcode'; preset: PresetName; height?: number }
  | { operation: 'extract_audio'; format: AudioFormat }
  | { operation: 'trim'; start: number; end?: number; duration?: number }
  | { operation: 'frame'; at: number; format: 'png' | 'jpeg'; width?: number }
  | { operation: 'resample'; sampleRate: number; channels?: number; format: AudioFormat }
  | { operation: 'normalize'; targetLufs: number; truePeak: number; lra: number; format?: AudioFormat };

export interface AvPlan {
  ext: string;
  /** Seconds of media the output covers, for progress percent. */
  expectedSeconds: number;
  run(programs: Programs, input: string, output: string, signal: AbortSignal, onPercent: (p: number) => void): Promise<void>;
}

const TRIM_EXTS = new Set(['mp4', 'mkv', 'mov', 'webm', 'mp3', 'wav', 'flac', 'ogg', 'opus', 'm4a']);

function needAudio(probe: Probe, operation: string): void {
  if (!probe.streams.some((s) => s.type === 'audio')) {
    throw new AppError('VALIDATION_ERROR', `${operation} needs an audio stream, and the input has none.`, {
      details: [{ path: 'operation', message: 'no audio stream' }],
    });
  }
}

function needVideo(probe: Probe, operation: string): void {
  if (probe.kind !== 'video') {
    throw new AppError('VALIDATION_ERROR', `${operation} needs a video stream, and the input has none.`, {
      details: [{ path: 'operation', message: 'no video stream' }],
    });
  }
}

/** Runs ffmpeg writing `output`, reporting progress from `-progress pipe:1` as a share of `seconds`. */
export async function runFfmpeg(
  programs: Programs,
  args: string[],
  output: string | null,
  options: { signal: AbortSignal; seconds: number; onPercent: (p: number) => void; from?: number; to?: number },
): Promise<string> {
  const from = options.from ?? 0;
  const to = options.to ?? 100;
  const res = await runProgram(
    programs.ffmpeg,
    [...FFMPEG_BASE, '-y', ...args, '-progress', 'pipe:1', ...(output ? [output] : ['-f', 'null', '-'])],
    {
      signal: options.signal,
      // The engine writes only the output's folder (inside the roots); it reads the roots and scratch.
      confinement: { ...programs.confinement, writable: output ? [path.dirname(output)] : [] },
      maxStdout: 64 * 1024,
      onLine: (line) => {
        const m = /^out_time_(?:us|ms)=(\d+)$/.exec(line);
        if (m && options.seconds > 0) {
          const share = Math.min(1, Number(m[1]) / 1e6 / options.seconds);
          options.onPercent(from + (to - from) * share);
        } else if (line === 'progress=end') options.onPercent(to);
      },
    },
  );
  if (res.code !== 0) {
    throw new AppError('VALIDATION_ERROR', `ffmpeg could not process the input: ${engineMessage(res.stderr)}`, {
      details: [{ path: 'input', message: 'ffmpeg failed' }],
    });
  }
  return res.stderr;
}

interface LoudnormMeasure {
  input_i: string;
  input_tp: string;
  input_lra: string;
  input_thresh: string;
  target_offset: string;
}

function parseLoudnorm(stderr: string): LoudnormMeasure {
  const at = stderr.lastIndexOf('{');
  const end = stderr.lastIndexOf('}');
  try {
    const json = JSON.parse(stderr.slice(at, end + 1)) as LoudnormMeasure;
    if (!Number.isFinite(Number(json.input_i))) throw new Error('no integrated loudness');
    return json;
  } catch {
    throw new AppError(
      'VALIDATION_ERROR',
      'The input loudness could not be measured (silent or undecodable audio); nothing to normalise.',
      {
        details: [{ path: 'input', message: 'no measurable loudness' }],
      },
    );
  }
}

/** Checks the operation against the probed input and returns how to run it. */
export function planAv(op: AvOperation, probe: Probe, inputExt: string): AvPlan {
  const duration = probe.duration ?? 0;
  const audio = probe.streams.find((s) => s.type === 'audio');
  switch (op.operation) {
    case 'transcode': {
      const preset = PRESETS[op.preset];
      if (!preset.video) needAudio(probe, `preset ${op.preset}`);
      const scale = op.height && preset.video && probe.kind === 'video' ? ['-vf', `scale=-2:${op.height}`] : [];
      return {
        ext: preset.ext,
        expectedSeconds: duration,
        run: (p, input, output, signal, onPercent) =>
          runFfmpeg(p, [...inputArgs(input), ...scale, ...preset.args, '-map_metadata', '0'], output, {
            signal,
            seconds: duration,
            onPercent,
          }).then(() => undefined),
      };
    }
    case 'extract_audio': {
      needAudio(probe, 'extract_audio');
      const preset = PRESETS[op.format];
      return {
        ext: preset.ext,
        expectedSeconds: duration,
        run: (p, input, output, signal, onPercent) =>
          runFfmpeg(p, [...inputArgs(input), '-map', '0:a:0', ...preset.args], output, { signal, seconds: duration, onPercent }).then(
            () => undefined,
          ),
      };
    }
    case 'trim': {
      if (duration && op.start >= duration) {
        throw new AppError('VALIDATION_ERROR', `start (${op.start} s) is at or after the end of the input (${duration} s).`, {
          details: [{ path: 'start', message: 'after the end' }],
        });
      }
      const end = op.end ?? (op.duration !== undefined ? op.start + op.duration : duration || undefined);
      if (end !== undefined && end <= op.start) {
        throw new AppError('VALIDATION_ERROR', 'end must be after start.', { details: [{ path: 'end', message: 'not after start' }] });
      }
      const length = end === undefined ? Math.max(0, duration - op.start) : Math.min(end, duration || end) - op.start;
      const ext = TRIM_EXTS.has(inputExt) ? inputExt : probe.kind === 'video' ? 'mkv' : 'flac';
      // Re-encoded so the cut is frame-accurate (stream copy would snap to keyframes).
      const encode =
        probe.kind !== 'video'
          ? []
          : ext === 'webm'
            ? ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-c:a', 'libopus']
            : ['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'];
      return {
        ext,
        expectedSeconds: length,
        run: (p, input, output, signal, onPercent) =>
          runFfmpeg(p, ['-ss', String(op.start), ...inputArgs(input), '-t', String(length), ...encode], output, {
            signal,
            seconds: length,
            onPercent,
          }).then(() => undefined),
      };
    }
    case 'frame': {
      needVideo(probe, 'frame');
      if (duration && op.at >= duration) {
        throw new AppError('VALIDATION_ERROR', `at (${op.at} s) is at or after the end of the input (${duration} s).`, {
          details: [{ path: 'at', message: 'after the end' }],
        });
      }
      const scale = op.width ? ['-vf', `scale=${op.width}:-2`] : [];
      return {
        ext: op.format === 'jpeg' ? 'jpg' : 'png',
        expectedSeconds: 0,
        run: (p, input, output, signal, onPercent) =>
          runFfmpeg(
            p,
            [
              '-ss',
              String(op.at),
              ...inputArgs(input),
              '-map',
              '0:v:0',
              '-frames:v',
              '1',
              ...scale,
              ...(op.format === 'jpeg' ? ['-q:v', '3'] : []),
            ],
            output,
            { signal, seconds: 0, onPercent },
          ).then(() => undefined),
      };
    }
    case 'resample': {
      needAudio(probe, 'resample');
      const preset = PRESETS[op.format];
      if (op.format === 'opus' && ![8000, 12000, 16000, 24000, 48000].includes(op.sampleRate)) {
        throw new AppError('VALIDATION_ERROR', 'Opus supports 8000, 12000, 16000, 24000 and 48000 Hz only; pick one or another format.', {
          details: [{ path: 'sampleRate', message: 'not an Opus rate' }],
        });
      }
      return {
        ext: preset.ext,
        expectedSeconds: duration,
        run: (p, input, output, signal, onPercent) =>
          runFfmpeg(
            p,
            [
              ...inputArgs(input),
              '-map',
              '0:a:0',
              ...preset.args,
              '-af',
              `aresample=${op.sampleRate}:resampler=soxr`,
              '-ar',
              String(op.sampleRate),
              ...(op.channels ? ['-ac', String(op.channels)] : []),
            ],
            output,
            { signal, seconds: duration, onPercent },
          ).then(() => undefined),
      };
    }
    case 'normalize': {
      needAudio(probe, 'normalize');
      const keepVideo = probe.kind === 'video' && op.format === undefined;
      const preset = PRESETS[op.format ?? 'wav'];
      const rate = String(audio?.sampleRate && audio.sampleRate >= 8000 ? Math.min(audio.sampleRate, 48000) : 48000);
      const target = `I=${op.targetLufs}:TP=${op.truePeak}:LRA=${op.lra}`;
      return {
        ext: keepVideo ? 'mkv' : preset.ext,
        expectedSeconds: duration,
        run: async (p, input, output, signal, onPercent) => {
          const measured = parseLoudnorm(
            await runFfmpeg(p, [...inputArgs(input), '-map', '0:a:0', '-af', `loudnorm=${target}:print_format=json`], null, {
              signal,
              seconds: duration,
              onPercent,
              to: 50,
            }),
          );
          const filter =
            `loudnorm=${target}:measured_I=${measured.input_i}:measured_TP=${measured.input_tp}:measured_LRA=${measured.input_lra}` +
            `:measured_thresh=${measured.input_thresh}:offset=${measured.target_offset}:linear=true:print_format=summary`;
          const codecs = keepVideo
            ? ['-map', '0:v:0', '-map', '0:a:0', '-c:v', 'copy', '-c:a', 'aac', '-b:a', '192k']
            : ['-map', '0:a:0', ...preset.args];
          await runFfmpeg(p, [...inputArgs(input), ...codecs, '-af', filter, '-ar', op.format === 'opus' ? '48000' : rate], output, {
            signal,
            seconds: duration,
            onPercent,
            from: 50,
          });
        },
      };
    }
  }
}
