import { spawnSync } from 'node:child_process';

/** Runs ffmpeg to make test media (lavfi sources); throws with its stderr when it fails. */
export function makeMedia(...args: string[]): void {
  const res = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`ffmpeg ${args.join(' ')} failed: ${res.stderr || res.error?.message}`);
}

/** A sine tone of `seconds` at `frequency` Hz (lavfi's amplitude 1/8), written to `file` (its extension picks the format). */
export function makeTone(file: string, options: { seconds: number; frequency?: number; sampleRate?: number; extra?: string[] }): void {
  const { seconds, frequency = 440, sampleRate = 48000, extra = [] } = options;
  makeMedia('-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${seconds}:sample_rate=${sampleRate}`, ...extra, file);
}

/** A test-pattern video (testsrc2) with a tone: H.264 ultrafast + AAC, `channels` audio channels. */
export function makeClip(
  file: string,
  options: { seconds: number; size?: string; rate?: number; frequency?: number; sampleRate?: number; channels?: number; extra?: string[] },
): void {
  const { seconds, size = '320x240', rate = 25, frequency = 440, sampleRate = 48000, channels = 2, extra = [] } = options;
  makeMedia(
    ...['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=${rate}:duration=${seconds}`],
    ...['-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${seconds}:sample_rate=${sampleRate}`],
    ...['-ac', String(channels), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'],
    ...extra,
    file,
  );
}
