//! `gisclaw mcp` driven by a real MCP client: the official Python SDK
//! (`tests/mcp/client.py`, in the pinned venv `tests/mcp/client-venv.sh`
//! makes), over stdio, against the real sandbox. Each scenario starts its
//! own server; the disconnect test speaks the protocol itself so that it
//! can drop the connection mid-cell and watch what is left.

use crate::common;
use common::alive;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The Python of the MCP client venv; a clear failure when it is missing.
fn client_python() -> PathBuf {
    let python = common::repo().join("target/mcp-client-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `bash tests/mcp/client-venv.sh` (make test does)",
        python.display()
    );
    python
}

/// A copy of the example's data (a hostile cell must not touch the repo's).
fn data_copy(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir(&data).unwrap();
    let example = common::repo().join("examples/heat_island/data");
    for entry in std::fs::read_dir(example).unwrap().flatten() {
        std::fs::copy(entry.path(), data.join(entry.file_name())).unwrap();
    }
    data
}

/// Runs one scenario of `client.py`; returns what it observed.
fn scenario(name: &str, envs: &[(&str, &str)]) -> Value {
    let dir = common::workdir();
    let data = data_copy(dir.path());
    client(name, &data, &dir.path().join("session"), envs)
}

/// Runs `client.py NAME GISCLAW DATA WORKDIR` with `envs`; returns the JSON
/// line it printed last.
fn client(name: &str, data: &Path, workdir: &Path, envs: &[(&str, &str)]) -> Value {
    let out = Command::new(client_python())
        .arg(common::repo().join("tests/mcp/client.py"))
        .args([name, env!("CARGO_BIN_EXE_gisclaw")])
        .arg(data)
        .arg(workdir)
        .envs(envs.iter().copied())
        .output()
        .expect("the MCP client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scenario {name} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    let observed: Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(observed["ok"], true, "{observed}");
    observed
}

#[test]
fn a_client_lists_the_tools_with_schemas_and_descriptions() {
    let seen = scenario("tools", &[]);
    assert_eq!(seen["server"], "gisclaw");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "execute_python",
            "inspect_data",
            "list_files",
            "list_variables",
            "reset_session",
            "save_script"
        ]
    );
    assert!(seen["instructions"]
        .as_str()
        .unwrap()
        .contains("pred_results/"));
}

#[test]
fn an_analysis_across_calls_keeps_state_and_returns_its_figure_as_an_image() {
    let seen = scenario("analysis", &[]);
    assert!(seen["progress"].as_u64().unwrap() >= 1, "{seen}");
    assert!(seen["image_bytes"].as_u64().unwrap() > 1000, "{seen}");
    assert_eq!(
        seen["resources"],
        json!([
            "gisclaw://card",
            "gisclaw://card.json",
            "gisclaw://transcript",
            "gisclaw://pred_results/stations_map.png"
        ])
    );
    assert!(
        !seen["card_datasets"].as_array().unwrap().is_empty(),
        "{seen}"
    );
}

#[test]
fn with_rag_search_docs_is_offered_and_a_wrong_api_gets_its_docs() {
    let index = crate::knowledge::index();
    let seen = scenario("rag", &[("GISCLAW_KNOWLEDGE", index.to_str().unwrap())]);
    assert!(
        seen["wrong_api"].as_str().unwrap().contains("unary_union"),
        "{seen}"
    );
}

#[test]
fn a_cancelled_cell_is_interrupted_and_the_session_keeps_its_variables() {
    let seen = scenario("cancel", &[]);
    assert_eq!(seen["after_cancel"], "before 42");
}

#[test]
fn hostile_cells_through_mcp_are_contained_and_the_session_goes_on() {
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let pid = std::process::id();
    let secret = home.join(format!(".gisclaw-mcp-secret-{pid}"));
    std::fs::write(&secret, "api_key = \"sk-home\"\n").unwrap();
    let outside = home.join(format!(".gisclaw-mcp-outside-{pid}"));
    let seen = scenario(
        "hostile",
        &[
            ("MCP_TEST_SECRET", secret.to_str().unwrap()),
            ("MCP_TEST_OUTSIDE", outside.to_str().unwrap()),
        ],
    );
    std::fs::remove_file(&secret).unwrap();
    assert!(!outside.exists(), "a cell wrote {}", outside.display());
    for (attack, verdict) in [
        ("api_key", "unreadable"),
        ("home", "unreadable"),
        ("network", "refused"),
        ("writes", "refused"),
        ("crash", "recovered"),
    ] {
        assert_eq!(seen[attack], verdict, "{seen}");
    }
}

#[test]
fn bad_requests_get_mcp_errors_and_the_server_answers_the_next_call() {
    let seen = scenario("bad_requests", &[]);
    let errors = &seen["errors"];
    for (case, want) in [
        ("unknown_tool", "tool not found"),
        ("wrong_type", "expected a string"),
        ("missing_arg", "missing field `code`"),
        ("extra_arg", "unknown field `shell`"),
        ("oversized", "over the sandbox's limit"),
        ("bad_path", "no such file"),
        ("over_message_limit", "timed out"),
        ("bad_resource", "is refused: it leads outside pred_results/"),
    ] {
        let got = errors[case].as_str().unwrap_or_default();
        assert!(got.contains(want), "{case}: {got}");
    }
}

#[test]
fn two_clients_at_once_get_separate_sessions() {
    let seen = scenario("two_clients", &[]);
    assert_eq!(seen["one"], "one");
    assert_eq!(seen["two"], "two");
}

/// The pids of `root`'s descendants, from /proc.
fn descendants(root: u32) -> Vec<u32> {
    let mut parents = std::collections::HashMap::<u32, Vec<u32>>::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parents.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for &child in parents.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            found.push(child);
            stack.push(child);
        }
    }
    found
}

#[test]
fn a_client_that_disconnects_mid_cell_leaves_nothing_running() {
    let dir = common::workdir();
    let data = data_copy(dir.path());
    let mut server = common::gisclaw_command(
        &[
            "mcp",
            "--data",
            data.to_str().unwrap(),
            "--workdir",
            dir.path().join("session").to_str().unwrap(),
            // Its own zygote, so that its sessions are its descendants.
            "--no-daemon",
        ],
        &[],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: u64| -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "server closed");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "disconnect-test", "version": "0"}}}),
    );
    assert!(answer(1)["result"]["serverInfo"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "execute_python", "arguments": {"code": "x = 1\nprint('ready')"}}}),
    );
    let ready = answer(2);
    assert!(ready.to_string().contains("ready"), "{ready}");
    let sandbox = descendants(server.id());
    assert!(!sandbox.is_empty(), "no sandbox processes under the server");

    // A cell that would run for ten minutes, then the client goes away.
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "execute_python", "arguments": {"code": "import time\ntime.sleep(600)"}}}),
    );
    std::thread::sleep(Duration::from_millis(800));
    drop(stdin);
    drop(stdout);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server still runs 30 s after its client left"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
    // The sandbox's processes go with the session.
    let deadline = Instant::now() + Duration::from_secs(10);
    while sandbox.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<u32> = sandbox.into_iter().filter(|&p| alive(p)).collect();
    assert!(
        left.is_empty(),
        "still running after the client left: {left:?}"
    );
}

/// Sends SIGINT to `pid`.
fn interrupt(pid: u32) {
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits up to `limit` for `child` to exit.
/// A server process killed (with its process group's sandbox) when the
/// test ends, so that a failing assertion leaves nothing running.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn wait_exit(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < limit, "still running after {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `gisclaw mcp --http` on a free loopback port with `extra` options, its
/// sessions under `root`: the process, its URL and its token (empty with
/// `--no-auth`). The rest of its log is drained on a thread.
fn http_server(data: &Path, root: &Path, extra: &[&str]) -> (Server, String, String) {
    let mut args = vec![
        "mcp",
        "--http",
        "127.0.0.1:0",
        "--data",
        data.to_str().unwrap(),
        "--workdir",
        root.to_str().unwrap(),
        // Its own zygote, so that its sessions are its descendants.
        "--no-daemon",
    ];
    args.extend_from_slice(extra);
    let runtime = root.with_extension("runtime");
    let mut child =
        common::gisclaw_command(&args, &[("GISCLAW_RUNTIME_DIR", runtime.to_str().unwrap())])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let (mut url, mut token) = (String::new(), String::new());
    loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "server exited");
        if let Some(rest) = line.trim().strip_prefix("gisclaw mcp: serving ") {
            url = rest.split_whitespace().next().unwrap().to_string();
        } else if let Some(rest) = line.trim().strip_prefix("gisclaw mcp: token ") {
            token = rest.split_whitespace().next().unwrap().to_string();
        }
        let auth_said = !token.is_empty() || line.contains("--no-auth");
        if !url.is_empty() && auth_said {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (Server(child), url, token)
}

/// The status line of a raw `initialize` POST to `url` with these extra
/// header lines (each ending in CRLF), and the whole answer.
fn raw_initialize(url: &str, host: &str, headers: &str) -> (String, String) {
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{headers}\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
    (
        answer.lines().next().unwrap_or_default().to_string(),
        answer,
    )
}

/// The `Mcp-Session-Id` of an HTTP answer.
fn session_id(answer: &str) -> String {
    answer
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| l.split_once(':').unwrap().1.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id in {answer}"))
}

/// The whole answer to a raw POST of `body` to `/mcp` in MCP session `id`.
fn raw_post(authority: &str, bearer: &str, id: &str, body: &serde_json::Value) -> String {
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\n{bearer}Mcp-Session-Id: {id}\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
    answer
}

#[test]
fn over_http_each_mcp_session_gets_its_own_sandbox_and_ctrl_c_ends_them_all() {
    let dir = common::workdir();
    let data = data_copy(dir.path());
    let root = dir.path().join("sessions");
    let (mut server, url, token) = http_server(&data, &root, &[]);
    let server = &mut server.0;
    let seen = client(
        "http",
        &data,
        &root,
        &[("MCP_TEST_URL", &url), ("MCP_TEST_TOKEN", &token)],
    );
    assert_eq!(seen["one"], "one", "{seen}");
    assert_eq!(seen["two"], "two", "{seen}");
    assert!(seen["progress"].as_u64().unwrap() >= 1, "{seen}");
    assert_eq!(seen["protocol"], "2025-11-25", "{seen}");
    for folder in ["client-001", "client-002"] {
        let record = root.join(folder).join("transcript.jsonl");
        assert!(record.exists(), "{folder}");
        crate::common::records::checked(&record);
    }
    // The clients ended their MCP sessions on leaving: their sandboxes are
    // gone, the zygote alone stays for the next client.
    let deadline = Instant::now() + Duration::from_secs(10);
    while descendants(server.id()).len() > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(descendants(server.id()).len(), 1, "sessions left running");

    // A web page (a request with an Origin) cannot drive the sandbox, even
    // with the token.
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let bearer = format!("Authorization: Bearer {token}\r\n");
    let (status, _) = raw_initialize(
        &url,
        authority,
        &format!("{bearer}Origin: http://evil.example\r\n"),
    );
    assert!(status.contains(" 403 "), "{status}");

    let sandbox = descendants(server.id());
    interrupt(server.id());
    let status = wait_exit(server, Duration::from_secs(30));
    assert!(status.success(), "{status}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while sandbox.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<u32> = sandbox.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "still running after Ctrl-C: {left:?}");
}

#[test]
fn over_http_no_token_no_session_a_foreign_host_is_refused_and_the_oldest_idle_session_makes_room()
{
    let dir = common::workdir();
    let data = data_copy(dir.path());
    let root = dir.path().join("sessions");
    let (server, url, token) = http_server(&data, &root, &["--max-sessions", "1"]);
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let port = authority.rsplit(':').next().unwrap();
    assert_eq!(token.len(), 64, "{token}");
    let file = root
        .with_extension("runtime")
        .join(format!("mcp-http-{port}.token"));
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), token);
    // Without the token, or with another one: 401, no session made.
    for headers in [
        "",
        "Authorization: Bearer nope\r\n",
        "Authorization: Basic x\r\n",
    ] {
        let (status, _) = raw_initialize(&url, authority, headers);
        assert!(status.contains(" 401 "), "{headers:?}: {status}");
    }
    assert!(
        !root.join("client-001").exists(),
        "a session was opened without the token"
    );
    let bearer = format!("Authorization: Bearer {token}\r\n");
    // A Host that only starts like the server's is not the server's.
    for host in [
        format!("127.0.0.1:{port}.evil.com"),
        "127.0.0.1".to_string(),
        format!("evil.com:{port}"),
    ] {
        let (status, _) = raw_initialize(&url, &host, &bearer);
        assert!(
            status.contains(" 403 ") || status.contains(" 400 "),
            "{host}: {status}"
        );
    }
    // The first session is served; a second ends it (idle the longest)
    // and is served in its place.
    let (status, first) = raw_initialize(&url, authority, &bearer);
    assert!(status.contains(" 200 "), "{first}");
    let first = session_id(&first);
    let (status, second) = raw_initialize(&url, authority, &bearer);
    assert!(
        status.contains(" 200 "),
        "the oldest idle one makes room: {second}"
    );
    let second = session_id(&second);
    assert!(root.join("client-002").exists());
    let deadline = Instant::now() + Duration::from_secs(10);
    let listed = loop {
        let answer = raw_post(
            authority,
            &bearer,
            &first,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        );
        if answer.starts_with("HTTP/1.1 404") || Instant::now() > deadline {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        listed.starts_with("HTTP/1.1 404"),
        "the ended session still answers: {listed}"
    );
    // A session running a call is never the one ended: a third is refused
    // while the second runs a cell, and served once it has finished.
    let notified = raw_post(
        authority,
        &bearer,
        &second,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert!(notified.starts_with("HTTP/1.1 202"), "{notified}");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "execute_python", "arguments": {"code":
            "import time\nopen('pred_results/started.txt', 'w').close()\ntime.sleep(6)\nprint('slept')"}}});
    let running = {
        let (authority, bearer, second) = (authority.to_string(), bearer.clone(), second.clone());
        std::thread::spawn(move || raw_post(&authority, &bearer, &second, &call))
    };
    let started = root.join("client-002/pred_results/started.txt");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !started.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(started.exists(), "the cell never started");
    let (status, answer) = raw_initialize(&url, authority, &bearer);
    assert!(
        !status.contains(" 200 "),
        "a busy session was ended: {answer}"
    );
    assert!(answer.contains("--max-sessions"), "{answer}");
    let ran = running.join().unwrap();
    assert!(
        ran.contains("slept"),
        "the busy session's cell was cut: {ran}"
    );
    let (status, reopened) = raw_initialize(&url, authority, &bearer);
    assert!(status.contains(" 200 "), "{reopened}");
    let mut server = server;
    interrupt(server.0.id());
    let status = wait_exit(&mut server.0, Duration::from_secs(30));
    assert!(status.success(), "{status}");
}

#[test]
fn http_is_served_on_loopback_only() {
    let out = common::gisclaw(&["mcp", "--http", "0.0.0.0:8765"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    assert!(
        common::text(&out).contains("only a loopback address"),
        "{}",
        common::text(&out)
    );
}

#[test]
fn a_client_that_drops_the_data_home_still_starts_the_server_from_the_recorded_install() {
    // The user's shell has its data, cache and config homes elsewhere; the
    // official SDK starts `gisclaw mcp` with its default environment (no
    // XDG_*), here with a HOME whose ~/.local/share holds no gisclaw. The
    // server finds the venv that `make setup` recorded beside the binary.
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let xdg = |name: &str| elsewhere.path().join(name).to_string_lossy().into_owned();
    let (data_home, cache_home, config_home) = (xdg("data"), xdg("cache"), xdg("config"));
    let seen = scenario(
        "relocated",
        &[
            ("MCP_TEST_HOME", home.path().to_str().unwrap()),
            ("XDG_DATA_HOME", &data_home),
            ("XDG_CACHE_HOME", &cache_home),
            ("XDG_CONFIG_HOME", &config_home),
        ],
    );
    assert!(
        seen["printed"].as_str().unwrap().starts_with("imported"),
        "{seen}"
    );
    assert!(!home.path().join(".local/share/gisclaw/venv").exists());
}
