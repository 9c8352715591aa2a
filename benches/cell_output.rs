//! Output capture: a cell that prints a lot, in a gisclaw session, against
//! the straightforward in-process capture (`exec` under
//! `contextlib.redirect_stdout(io.StringIO())`, as the Python agents do) —
//! both measured in this run, on the same venv.
//!
//! Run with `make bench` (or `cargo bench --bench cell_output`; it needs the
//! release worker: `cargo build --release -p gisclaw-worker`). Goals (issue
//! 25): 1M small prints ≤ 1.0× the baseline; one 50 MB print no slower than
//! before (0.73× then).
//!
//! A third line measures the capture gisclaw had before its buffer went
//! native (a Python `write` per call, kept here as the baseline's second
//! stream), so the gain is visible in the same run.

use std::process::Command;
use std::time::{Duration, Instant};

use gisclaw::sandbox::{SandboxConfig, Session, Zygote};

/// Runs per measure; the median is reported.
const RUNS: usize = 5;

/// The two cells: 1M prints of 49 characters (+ newline) = 50 MB, and one
/// print of 50 MB.
const CELLS: [(&str, &str); 2] = [
    (
        "1M small prints (50 MB)",
        "for i in range(1_000_000):\n    print('x' * 49)",
    ),
    ("one 50 MB print", "print('x' * 50_000_000)"),
];

/// The baseline process: times `exec` of each cell with stdout redirected
/// to an `io.StringIO` (and, as `previous`, to gisclaw's former pure-Python
/// bounded stream), printing seconds per run as JSON.
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

cells, runs = json.loads(sys.argv[1]), int(sys.argv[2])
result = {"stringio": [], "previous": []}
for code in cells:
    for kind, make in (("stringio", io.StringIO), ("previous", lambda: PythonBounded(1000, 4000))):
        times = []
        for _ in range(runs):
            buf = make()
            start = time.perf_counter()
            with contextlib.redirect_stdout(buf):
                exec(code, {})
            times.append(time.perf_counter() - start)
            del buf
        result[kind].append(times)
print(json.dumps(result))
"#;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn seconds(list: &serde_json::Value) -> Vec<Duration> {
    list.as_array()
        .expect("a list of times")
        .iter()
        .map(|t| Duration::from_secs_f64(t.as_f64().expect("seconds")))
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let config = SandboxConfig::default();
    let python = config.venv.join("bin/python");
    let codes: Vec<&str> = CELLS.iter().map(|(_, code)| *code).collect();
    let out = Command::new(&python)
        .args([
            "-c",
            BASELINE,
            &serde_json::to_string(&codes).expect("json"),
            &RUNS.to_string(),
        ])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let baseline: serde_json::Value = serde_json::from_slice(&out.stdout).expect("baseline JSON");

    let zygote = Zygote::start(config).expect("zygote starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut session = Session::open(&zygote, dir.path()).expect("session opens");
    println!("cell output capture (medians of {RUNS} runs; whole execute round trip for gisclaw)");
    for (i, (label, code)) in CELLS.iter().enumerate() {
        let ours = median(
            (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    let out = session.execute(code).expect("cell runs");
                    assert!(out.result.ok, "{:?}", out.result.error);
                    assert!(out.result.stdout_dropped_chars > 0);
                    start.elapsed()
                })
                .collect(),
        );
        let stringio = median(seconds(&baseline["stringio"][i]));
        let previous = median(seconds(&baseline["previous"][i]));
        let ratio = ours.as_secs_f64() / stringio.as_secs_f64();
        println!("  {label}");
        println!(
            "    (a) in-process exec, stdout to io.StringIO          {:>9.1} ms",
            ms(stringio)
        );
        println!(
            "    (b) gisclaw session, native bounded capture        {:>9.1} ms",
            ms(ours)
        );
        println!(
            "        the former Python-level bounded stream, in (a)  {:>9.1} ms",
            ms(previous)
        );
        println!(
            "    ratio (b)/(a) = {ratio:.2}  (goal <= 1.0: {})",
            if ratio <= 1.0 { "met" } else { "NOT met" }
        );
    }
}
