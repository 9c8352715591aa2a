//! Output capture: a cell that prints a lot, in a gisclaw session, against
//! the straightforward in-process capture (`exec` under
//! `contextlib.redirect_stdout(io.StringIO())`, then the text read with
//! `getvalue()` and the buffer let go, as the Python agents do to build an
//! observation) — both measured in this run, on the same venv. gisclaw's
//! time is the whole `execute` round trip, its observation text included;
//! the baseline's `exec` alone is printed beside it.
//!
//! Run with `make bench` (or `cargo bench --bench cell_output`; it needs the
//! release worker: `cargo build --release -p gisclaw-worker`). Goals (issue
//! 25): 1M small prints ≤ 1.0× the baseline; one 50 MB print no slower than
//! before (0.73× then).
//!
//! A third line measures the capture gisclaw had before its buffer went
//! native (a Python `write` per call, kept here as the baseline's second
//! stream), so the gain is visible in the same run. A last line measures
//! a session with a live view (chat's, MCP progress): the cell's first
//! 256 KiB sent as it runs, against (b).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gisclaw::sandbox::{SandboxConfig, Session, Zygote};

/// Runs per measure; the median is reported.
const RUNS: usize = 7;

/// The two cells: 1M prints of 49 characters (+ newline) = 50 MB, and one
/// print of 50 MB.
const CELLS: [(&str, &str); 2] = [
    (
        "1M small prints (50 MB)",
        "for i in range(1_000_000):\n    print('x' * 49)",
    ),
    ("one 50 MB print", "print('x' * 50_000_000)"),
];

/// The baseline process: for each cell index read on stdin, times `exec`
/// of that cell with stdout redirected to an `io.StringIO` and, as
/// `previous`, to gisclaw's former pure-Python bounded stream; answers one
/// JSON line `[stringio_seconds, previous_seconds]`. It stays up so that
/// its runs and gisclaw's interleave (the machine's load hits both alike).
const BASELINE: &str = r#"
import collections, contextlib, io, json, sys, time

class PythonBounded(io.TextIOBase):
    """gisclaw's capture before it went native: a Python write per call."""
    def __init__(self, head, tail):
        super().__init__()
        self._hb, self._tb = head, tail
        self._head, self._hl = [], 0
        self._tail, self._tl = collections.deque(), 0
        self.total = 0
    def writable(self):
        return True
    def write(self, s):
        n = len(s)
        self.total += n
        if self._hl < self._hb:
            take = s[: self._hb - self._hl]
            self._head.append(take)
            self._hl += len(take)
            s = s[len(take):]
        if s and self._tb:
            self._tail.append(s)
            self._tl += len(s)
            while self._tail and self._tl - len(self._tail[0]) >= self._tb:
                self._tl -= len(self._tail.popleft())
        return n

cells = json.loads(sys.argv[1])

def timed(code, buf):
    start = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        exec(code, {})
    return time.perf_counter() - start

def read(code):
    """exec, then the captured text taken and the buffer let go, as an
    agent does to build its observation."""
    start = time.perf_counter()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(code, {})
    text = buf.getvalue()[-4000:]
    del buf
    return time.perf_counter() - start

for line in sys.stdin:
    code = cells[int(line)]
    answer = [timed(code, io.StringIO()), timed(code, PythonBounded(1000, 4000)), read(code)]
    print(json.dumps(answer), flush=True)
"#;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    common::refuse_a_stale_worker();
    let config = SandboxConfig::default();
    let python = config.venv.join("bin/python");
    let codes: Vec<&str> = CELLS.iter().map(|(_, code)| *code).collect();
    let mut baseline = Command::new(&python)
        .args([
            "-c",
            BASELINE,
            &serde_json::to_string(&codes).expect("json"),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python runs");
    let mut ask = baseline.stdin.take().expect("stdin");
    let mut answers = BufReader::new(baseline.stdout.take().expect("stdout")).lines();

    let zygote = Zygote::start(config).expect("zygote starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut session = Session::open(&zygote, dir.path()).expect("session opens");
    let live_dir = tempfile::tempdir().expect("temp dir");
    let mut live = Session::open(&zygote, live_dir.path()).expect("session opens");
    let received = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&received);
    live.set_output_sink(Some(std::sync::Arc::new(move |_, text: &str| {
        counter.fetch_add(text.len(), std::sync::atomic::Ordering::Relaxed);
    })));
    // Per cell: (a) StringIO, the former stream, (b) gisclaw, its cell
    // time, (a) with the text read, (c) gisclaw with a live view.
    let mut times = vec![
        [
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new()
        ];
        CELLS.len()
    ];
    for _ in 0..RUNS {
        for (i, (_, code)) in CELLS.iter().enumerate() {
            writeln!(ask, "{i}").expect("baseline alive");
            let line = answers.next().expect("an answer").expect("a line");
            let [stringio, previous, read]: [f64; 3] =
                serde_json::from_str(&line).expect("three times");
            times[i][0].push(Duration::from_secs_f64(stringio));
            times[i][1].push(Duration::from_secs_f64(previous));
            times[i][4].push(Duration::from_secs_f64(read));
            let start = Instant::now();
            let out = session.execute(code).expect("cell runs");
            times[i][2].push(start.elapsed());
            assert!(out.result.ok, "{:?}", out.result.error);
            assert!(out.result.stdout_dropped_chars > 0);
            times[i][3].push(Duration::from_micros(out.result.duration_us));
            let start = Instant::now();
            let out = live.execute(code).expect("cell runs");
            times[i][5].push(start.elapsed());
            assert!(out.result.ok, "{:?}", out.result.error);
        }
    }
    assert!(received.load(std::sync::atomic::Ordering::Relaxed) > 0);
    drop(ask);
    let _ = baseline.wait();

    println!("cell output capture (medians of {RUNS} interleaved runs; gisclaw: the whole execute round trip)");
    for ((label, _), [stringio, previous, ours, inside, read, with_live]) in CELLS.iter().zip(times)
    {
        let (stringio, previous, ours, inside, read, with_live) = (
            median(stringio),
            median(previous),
            median(ours),
            median(inside),
            median(read),
            median(with_live),
        );
        let ratio = ours.as_secs_f64() / read.as_secs_f64();
        println!("  {label}");
        println!(
            "    (a) in-process exec, stdout to io.StringIO, text read {:>9.1} ms",
            ms(read)
        );
        println!(
            "        the same, exec alone (the text never read)        {:>9.1} ms",
            ms(stringio)
        );
        println!(
            "    (b) gisclaw session, native bounded capture          {:>9.1} ms",
            ms(ours)
        );
        println!(
            "        of which the cell's code, timed in the worker    {:>9.1} ms",
            ms(inside)
        );
        println!(
            "        the former Python-level bounded stream, in (a)    {:>9.1} ms",
            ms(previous)
        );
        println!(
            "    ratio (b)/(a) = {ratio:.2}  (goal <= 1.0: {}); against exec alone {:.2}",
            if ratio <= 1.0 { "met" } else { "NOT met" },
            ours.as_secs_f64() / stringio.as_secs_f64()
        );
        println!(
            "    (c) gisclaw session with a live view (chat, MCP)     {:>9.1} ms  ratio (c)/(b) = {:.2}",
            ms(with_live),
            with_live.as_secs_f64() / ours.as_secs_f64()
        );
    }
}
