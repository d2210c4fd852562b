// Progress of a long data command, always on stderr (export's stdout is the data): on a terminal a
// cli-progress bar with rate and ETA; otherwise (a log, a pipe, CI) one plain line each 10 %;
// nothing with --quiet.

import cliProgress from 'cli-progress';

export interface Meter {
  /** Work done so far, in the meter's unit. */
  update(done: number): void;
  /** Ends the bar (or the lines). */
  stop(): void;
}

type Unit = 'bytes' | 'records' | 'pages';

const MB = 1024 * 1024;

function shown(n: number, unit: Unit): string {
  return unit === 'bytes' ? `${(n / MB).toFixed(1)} MB` : `${Math.round(n).toLocaleString('en-US')} ${unit}`;
}

export function meter(
  label: string,
  total: number,
  unit: Unit,
  quiet: boolean,
  stream: NodeJS.WriteStream = process.stderr,
): Meter {
  if (quiet || total <= 0) return { update() {}, stop() {} };
  const started = Date.now();
  const rate = (done: number) => {
    const s = (Date.now() - started) / 1000;
    return s > 0 ? done / s : 0;
  };
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${label} [{bar}] {percentage}% | {done} of {all} | {rate}/s | ETA {eta_formatted}`,
        hideCursor: true,
        etaBuffer: 50,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { done: shown(0, unit), all: shown(total, unit), rate: shown(0, unit) });
    return {
      update(done) {
        bar.update(Math.min(done, total), { done: shown(done, unit), rate: shown(rate(done), unit) });
      },
      stop() {
        bar.stop();
      },
    };
  }
  let nextTenth = 1;
  return {
    update(done) {
      const tenth = Math.floor((done / total) * 10);
      if (tenth < nextTenth) return;
      nextTenth = tenth + 1;
      stream.write(
        `${label}: ${Math.min(tenth * 10, 100)} % (${shown(done, unit)} of ${shown(total, unit)}, ${shown(rate(done), unit)}/s)\n`,
      );
    },
    stop() {},
  };
}
