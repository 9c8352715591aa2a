//! Shared set-up for integration tests: one real zygote per test binary,
//! started on the venv that `make setup` made (or `GISCLAW_VENV`).

#![allow(dead_code)]

pub mod browser;
pub mod fake_llm;
pub mod pty;
pub mod records;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};

use gisclaw::sandbox::{SandboxConfig, ServiceSettings, Session, Zygote};

/// The zygote shared by every test of this binary: the per-user sandbox
/// service's, as the CLI's commands use it (in a folder of this test run,
/// exiting a minute after the tests), so that every in-process sandbox and
/// containment test runs on sessions forked by the service.
pub fn zygote() -> &'static Arc<Zygote> {
    static ZYGOTE: OnceLock<Arc<Zygote>> = OnceLock::new();
    ZYGOTE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("gisclaw-test-service-{}", std::process::id()));
        let config = SandboxConfig {
            service: Some(ServiceSettings {
                idle: std::time::Duration::from_secs(60),
                dir: Some(dir),
            }),
            ..SandboxConfig::default()
        };
        let zygote =
            Zygote::start(config).unwrap_or_else(|err| panic!("starting the sandbox: {err}"));
        assert!(zygote.service_socket().is_some(), "the service's zygote");
        zygote
    })
}

/// A fresh work dir, removed when the returned guard drops.
pub fn workdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("gisclaw-test-")
        .tempdir()
        .expect("temp dir")
}

/// A session with the default limits in a fresh work dir.
pub fn session() -> (Session, tempfile::TempDir) {
    let dir = workdir();
    let s = Session::open(zygote(), dir.path()).expect("open session");
    (s, dir)
}

/// A session with its own limits.
pub fn session_with(config: SandboxConfig) -> (Session, tempfile::TempDir) {
    let dir = workdir();
    let s = Session::open_with(zygote(), dir.path(), config).expect("open session");
    (s, dir)
}

/// The default config, for tweaking in a test.
pub fn config() -> SandboxConfig {
    zygote().config().clone()
}

/// Path of a file inside the work dir.
pub fn in_dir(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// Runs the real `gisclaw` binary with `envs` added. Its Error Memory is a
/// file of this test process, never the user's.
pub fn gisclaw(args: &[&str], envs: &[(&str, &str)]) -> Output {
    gisclaw_command(args, envs).output().expect("gisclaw runs")
}

/// The command [`gisclaw`] runs, for tests that spawn it themselves.
pub fn gisclaw_command(args: &[&str], envs: &[(&str, &str)]) -> Command {
    let memory =
        std::env::temp_dir().join(format!("gisclaw-test-memory-{}.json", std::process::id()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gisclaw"));
    cmd.args(args).env("GISCLAW_ERROR_MEMORY", memory);
    // No live backend leaks in from the developer's environment or config.
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "OLLAMA_HOST",
        "OLLAMA_MODEL",
        "GISCLAW_GGUF",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("GISCLAW_CONFIG", "/nonexistent/gisclaw-test-config.toml");
    // The sandbox services the tests' commands start exit soon after them.
    cmd.env("GISCLAW_SANDBOX_IDLE", "60");
    // Nor the local model `make setup-local-model` may have installed (the
    // local-model tests name theirs).
    cmd.env("GISCLAW_LLAMA_SERVER", "/nonexistent/llama-server");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd
}

/// What a run printed: stdout then stderr.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the sandbox venv's python (outside any sandbox) with `args` and
/// returns its stdout, after checking that it succeeded (its stderr, if
/// not).
pub fn venv_python<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    venv_python_in(Path::new("."), args)
}

/// [`venv_python`] run from the folder `cwd`.
pub fn venv_python_in<S: AsRef<std::ffi::OsStr>>(
    cwd: &Path,
    args: impl IntoIterator<Item = S>,
) -> String {
    let out = Command::new(gisclaw::paths::default_venv().join("bin/python"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the venv's python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The task suite in GeoAnalystBench's layout (`T*/task.yaml`, `gold.py`).
pub fn geoanalyst() -> PathBuf {
    repo().join("benchmarks/geoanalyst")
}

/// The gold solution of one of its tasks.
pub fn gold(task: &str) -> String {
    let path = geoanalyst().join(task).join("gold.py");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A live (not zombie) process with this pid.
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
            after.split_whitespace().next() != Some("Z")
        })
        .unwrap_or(false)
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `gisclaw solve TASK --replay REPLAY --out OUT [extra…]` with `envs`.
pub fn solve_replay(
    task: &Path,
    replay: &Path,
    out: &Path,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> Output {
    solve_replay_command(task, replay, out, extra, envs)
        .output()
        .expect("gisclaw runs")
}

/// The command [`solve_replay`] runs, for tests that spawn it themselves.
pub fn solve_replay_command(
    task: &Path,
    replay: &Path,
    out: &Path,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> Command {
    let mut args = vec![
        "solve",
        task.to_str().unwrap(),
        "--replay",
        replay.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    gisclaw_command(&args, envs)
}

/// One replay line: an assistant message calling `name(args)`.
pub fn call(name: &str, args: serde_json::Value) -> String {
    serde_json::json!({"role": "assistant", "content": format!("calling {name}"), "tool_calls": [
        {"type": "function", "function": {"name": name, "arguments": args.to_string()}}
    ]})
    .to_string()
}

/// The events of a run's transcript (checked against its schema first).
pub fn events(out: &Path) -> Vec<serde_json::Value> {
    records::checked(&out.join("transcript.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A run's run.json.
pub fn run_json(out: &Path) -> serde_json::Value {
    read_json(&out.join("run.json"))
}

/// A JSON file, parsed; a missing or bad file fails the test naming it.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes `messages` as a replay file, one JSON message per line.
pub fn write_jsonl(path: &Path, messages: &[gisclaw::llm::Message]) {
    let lines: Vec<String> = messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The installed JavaScript runtime with a short call limit and a small
/// heap, so that a runaway call is cut quickly in tests. `GISCLAW_EXE`
/// is the built binary (the runtime's launcher is `gisclaw __js`).
pub fn js_runtime(call_limit: std::time::Duration) -> gisclaw::js::JsRuntime {
    let mut config = gisclaw::js::JsConfig::installed()
        .unwrap_or_else(|e| panic!("{e}: the JavaScript tests need `make setup`"));
    config.call_limit = call_limit;
    config.heap_mb = 256;
    gisclaw::js::JsRuntime::new(config)
}

/// A call of `function f(...)` with JS-expression arguments.
pub fn js_call(code: &str, args: &[&str]) -> gisclaw::js::JsCall {
    gisclaw::js::JsCall {
        code: code.into(),
        name: "f".into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        eval_methods: Vec::new(),
    }
}

/// The value a call returned, or a panic saying how it ended.
pub fn js_value(
    runtime: &mut gisclaw::js::JsRuntime,
    call: &gisclaw::js::JsCall,
) -> serde_json::Value {
    match runtime.call(call).expect("the runtime starts") {
        gisclaw::js::CallOutcome::Answered(a) if a.ok => a.value.unwrap_or_default(),
        other => panic!("{} ended {other:?}", call.code),
    }
}

/// The heat-island example as a one-task suite in `root/suite` (its task
/// file and data copied, so a test may change them); returns the suite.
pub fn example_suite(root: &Path) -> PathBuf {
    let task = root.join("suite/heat");
    std::fs::create_dir_all(task.join("data")).unwrap();
    let example = repo().join("examples/heat_island");
    std::fs::copy(example.join("task.yaml"), task.join("task.yaml")).unwrap();
    for f in ["stations.csv", "city_boundary.geojson"] {
        std::fs::copy(example.join("data").join(f), task.join("data").join(f)).unwrap();
    }
    root.join("suite")
}

/// The example's recorded assistant messages (examples/heat_island/replay.jsonl).
pub fn example_messages() -> Vec<serde_json::Value> {
    std::fs::read_to_string(repo().join("examples/heat_island/replay.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
