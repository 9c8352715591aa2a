//! The sandbox's containment claims, each tried as an attack by a cell (a
//! hostile model, or a prompt injection in the data), against the real
//! kernel, worker and files; after each, the session is shown still working.
//! Where a layer depends on the kernel, the test says what it checked.

use crate::common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{call, events, run_json, solve_replay, solve_replay_command};
use gisclaw::sandbox::{CellStatus, SandboxConfig, Session, SessionDirs};
use serde_json::json;

fn run(session: &mut Session, code: &str) -> gisclaw::sandbox::CellOutcome {
    session
        .execute(code)
        .unwrap_or_else(|err| panic!("sandbox failed on {code:?}: {err}"))
}

/// The session still runs ordinary code and keeps its variables.
fn still_works(session: &mut Session) {
    let out = run(session, "alive = 6 * 7\nprint(alive)");
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    assert_eq!(out.result.stdout.trim(), "42");
}

/// The config without namespaces: the fallback layers alone.
fn without_namespaces() -> SandboxConfig {
    SandboxConfig {
        namespaces: false,
        ..common::config()
    }
}

/// Host processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(marker) {
                found.push(format!("{}: {cmd}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn sessions_run_in_their_own_namespaces_where_the_kernel_allows() {
    let (mut s, _dir) = common::session();
    if let Some(why) = &common::zygote().info().namespace_error {
        eprintln!("namespaces unavailable here ({why}); the fallback tests below still run");
        assert!(!s.confinement().namespaces.is_active());
        return;
    }
    assert!(
        s.confinement().namespaces.is_active(),
        "{:?}",
        s.confinement()
    );
    assert!(
        s.confinement().capabilities.is_active(),
        "{:?}",
        s.confinement()
    );
    let out = run(
        &mut s,
        "import os\nprint(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n\
         print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n\
         print(sorted(os.listdir('/')))",
    );
    let lines: Vec<&str> = out.result.stdout.lines().collect();
    assert_eq!(
        lines[0], "['1', '2']",
        "only the monitor and the session are visible: {}",
        lines[0]
    );
    assert_eq!(lines[1], "0000000000000000", "no capability held");
    for absent in ["'home'", "'run'", "'var'", "'mnt'", "'boot'"] {
        assert!(
            !lines[2].contains(absent),
            "{absent} in the view: {}",
            lines[2]
        );
    }
    still_works(&mut s);
}

#[test]
fn the_parents_environment_and_api_keys_are_unreadable() {
    // gisclaw runs a script whose cells hunt for the key everywhere a
    // process can look; meanwhile the test reads gisclaw's own environ.
    let dir = common::workdir();
    let script = dir.path().join("hunt.py");
    std::fs::write(
        &script,
        "import os, glob\nfound = []\n\
         for path in glob.glob('/proc/*/environ') + ['/proc/1/environ', '/proc/self/environ']:\n\
         \x20   try:\n\
         \x20       if b'sk-test-secret-4242' in open(path, 'rb').read():\n\
         \x20           found.append(path)\n\
         \x20   except Exception:\n\
         \x20       pass\n\
         pid = os.getppid()\n\
         print('found', found, 'environ', 'sk-test-secret-4242' in str(os.environ))\n\
         # %%\nimport time\ntime.sleep(4)\nprint('slept')\n",
    )
    .unwrap();
    let child = common::gisclaw_command(
        &[
            "exec",
            script.to_str().unwrap(),
            "--workdir",
            dir.path().to_str().unwrap(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test-secret-4242"),
            ("AWS_SECRET_ACCESS_KEY", "sk-test-secret-4242"),
            // GDAL's own configuration is passed on, its credentials are not.
            ("GDAL_HTTP_USERPWD", "me:sk-test-secret-4242"),
            ("CPL_AWS_SECRET", "sk-test-secret-4242"),
            (
                "GDAL_HTTP_HEADERS",
                "Authorization: Bearer sk-test-secret-4242",
            ),
        ],
    )
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let environ = std::fs::read(format!("/proc/{}/environ", child.id())).unwrap();
    assert!(
        !String::from_utf8_lossy(&environ).contains("sk-test-secret-4242"),
        "gisclaw's initial environment block still holds the key"
    );
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("found [] environ False"), "{stdout}");
    assert!(stdout.contains("slept"), "{stdout}");
}

/// Both ways: in namespaces (where the kernel allows) and with the
/// fallback layers alone.
fn for_both_modes(test: impl Fn(&mut Session, &Path, &str)) {
    for (mode, config) in [
        ("namespaces", common::config()),
        ("fallback", without_namespaces()),
    ] {
        let (mut s, dir) = common::session_with(config);
        test(&mut s, dir.path(), mode);
        still_works(&mut s);
    }
}

#[test]
fn home_config_and_other_processes_are_out_of_reach() {
    // A stand-in for the user's config file (API keys, tokens) in the home.
    let home = std::path::PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let secret = home.join(format!(".gisclaw-attack-test-{}", std::process::id()));
    std::fs::write(&secret, "api_key = \"sk-test\"\n").unwrap();
    let secret_path = secret.display().to_string();
    for_both_modes(|s, _dir, mode| {
        if !s.confinement().filesystem.is_active() && !s.confinement().namespaces.is_active() {
            eprintln!("{mode}: neither Landlock nor namespaces here; not checked");
            return;
        }
        let code = format!(
            "import os\nseen = []\n\
             for p in ['{secret_path}', '/run/user', '/var/run/docker.sock', '/proc/1/environ']:\n\
             \x20   try:\n\
             \x20       (os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1))\n\
             \x20       seen.append(p)\n\
             \x20   except (PermissionError, FileNotFoundError, NotADirectoryError):\n\
             \x20       pass\n\
             print(seen)"
        );
        let out = run(s, &code);
        assert_eq!(out.result.stdout.trim(), "[]", "{mode}: {:?}", out.result);
    });
    std::fs::remove_file(&secret).unwrap();
}

#[test]
fn files_outside_cannot_be_remoded_retimed_or_tagged_and_data_stays_intact() {
    let data = common::workdir();
    let file = data.path().join("input.csv");
    std::fs::write(&file, "a,b\n1,2\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::metadata(&file).unwrap();
    for (mode, config) in [
        ("namespaces", common::config()),
        ("fallback", without_namespaces()),
    ] {
        let work = common::workdir();
        let dirs = SessionDirs {
            work: work.path().to_path_buf(),
            writable: Vec::new(),
            readable: vec![data.path().to_path_buf()],
            lend: false,
        };
        let mut s = Session::open_in(common::zygote(), &dirs, config).unwrap();
        let path = file.display();
        let out = run(
            &mut s,
            &format!(
                "import os\nrefused = []\n\
                 for name, act in [('chmod', lambda: os.chmod('{path}', 0o777)), ('utime', lambda: os.utime('{path}', (0, 0))),\n\
                 \x20                 ('chown', lambda: os.chown('{path}', 0, 0)), ('setxattr', lambda: os.setxattr('{path}', 'user.x', b'1')),\n\
                 \x20                 ('write', lambda: open('{path}', 'w').write('gone'))]:\n\
                 \x20   try:\n\
                 \x20       act()\n\
                 \x20   except OSError:\n\
                 \x20       refused.append(name)\n\
                 print(refused)"
            ),
        );
        let refused = out.result.stdout.trim().to_string();
        if s.confinement().namespaces.is_active() {
            assert_eq!(
                refused, "['chmod', 'utime', 'chown', 'setxattr', 'write']",
                "{mode}"
            );
        } else {
            // Landlock cannot refuse chmod/chown/utime/setxattr (see docs/sandbox.md).
            assert!(
                refused.contains("'write'") || !s.confinement().filesystem.is_active(),
                "{mode}: {refused}"
            );
        }
        still_works(&mut s);
        if s.confinement().namespaces.is_active() {
            let after = std::fs::metadata(&file).unwrap();
            assert_eq!(
                after.permissions().mode(),
                before.permissions().mode(),
                "{mode}"
            );
            use std::os::unix::fs::MetadataExt;
            assert_eq!(after.mtime(), before.mtime(), "{mode}");
        }
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "a,b\n1,2\n",
            "{mode}"
        );
    }
}

#[test]
fn no_process_outlives_its_session_and_forks_are_bounded() {
    let (mut s, _dir) = common::session();
    let out = run(
        &mut s,
        "import subprocess, os\n\
         p = subprocess.Popen(['sleep', '987651'])\n\
         if os.fork() == 0:\n\
         \x20   os.execvp('sleep', ['sleep', '987652'])\n\
         print('started')",
    );
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        processes_with("98765").len(),
        2,
        "{:?}",
        processes_with("98765")
    );
    if s.confinement().namespaces.is_active() {
        // A fork bomb meets the process limit; the session survives it.
        let out = run(
            &mut s,
            "import os, time\nkids = 0\n\
             try:\n\
             \x20   while kids < 5000:\n\
             \x20       if os.fork() == 0:\n\
             \x20           time.sleep(60)\n\
             \x20           os._exit(0)\n\
             \x20       kids += 1\n\
             except OSError as e:\n\
             \x20   print('stopped at', kids, type(e).__name__)",
        );
        assert!(out.result.stdout.contains("stopped at"), "{:?}", out.result);
        still_works(&mut s);
    }
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with("98765").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        processes_with("98765").is_empty(),
        "{:?}",
        processes_with("98765")
    );
}

#[test]
fn a_worker_that_exits_while_its_child_holds_the_socket_is_reported_at_once() {
    let (mut s, _dir) = common::session();
    run(&mut s, "kept = 'yes'");
    let started = Instant::now();
    let out = run(
        &mut s,
        "import os, time\nif os.fork() == 0:\n    time.sleep(987653)\nos._exit(3)",
    );
    assert!(
        matches!(out.status, CellStatus::Crashed { .. }),
        "{:?}",
        out.status
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        gisclaw::observation::render(&out).contains("exited with code 3"),
        "{}",
        gisclaw::observation::render(&out)
    );
    assert_eq!(run(&mut s, "print(kept)").result.stdout.trim(), "yes");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        processes_with("987653").is_empty(),
        "{:?}",
        processes_with("987653")
    );
}

#[test]
fn half_a_frame_written_to_the_session_socket_cannot_outlast_the_cell_limit() {
    // The cell finds its own socket to the agent, writes the start of a
    // frame announcing more bytes than follow, and stalls: the agent reads
    // answers without blocking inside a frame, so the cell limit still ends
    // the cell, and the session is rebuilt from its journal.
    let (mut s, _dir) = common::session_with(SandboxConfig {
        cell_timeout: Duration::from_secs(3),
        interrupt_grace: Duration::from_secs(1),
        ..common::config()
    });
    run(&mut s, "kept = 'yes'");
    let started = Instant::now();
    let out = run(
        &mut s,
        "import os, time\n\
         for fd in os.listdir('/proc/self/fd'):\n\
         \x20   try:\n\
         \x20       if os.readlink(f'/proc/self/fd/{fd}').startswith('socket:'):\n\
         \x20           os.write(int(fd), (5000).to_bytes(4, 'big') + b'{\"kind\": \"')\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         time.sleep(600)",
    );
    // The interrupted cell's answer lands behind the garbage, so it cannot
    // be read: the worker is killed (an answer read would mean the half
    // frame never reached the agent, and the test proved nothing).
    assert!(
        matches!(
            out.status,
            CellStatus::TimedOut { killed: true, .. } | CellStatus::Crashed { .. }
        ),
        "{:?}",
        out.status
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(run(&mut s, "print(kept)").result.stdout.trim(), "yes");
    still_works(&mut s);
}

#[test]
fn host_unix_sockets_cannot_be_reached() {
    let dir = common::workdir();
    let path = dir.path().join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    for_both_modes(|s, _work, mode| {
        if !s.confinement().network.is_active() {
            eprintln!("{mode}: no seccomp here; not checked");
            return;
        }
        let out = run(
            s,
            &format!(
                "import socket\nc = socket.socket(socket.AF_UNIX)\nc.connect('{}')",
                path.display()
            ),
        );
        assert_eq!(out.status, CellStatus::Error, "{mode}");
        assert!(listener.accept().is_err(), "{mode}: a connection arrived");
    });
}

#[test]
fn a_cell_cannot_rewrite_the_runs_records_or_pass_off_a_link_as_an_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/points.csv"), "id,value\n1,3.5\n").unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(&task, "id: tiny\ntitle: Tiny\ninstruction: Copy the table.\ndata: data\noutputs:\n  - pred_results/out.csv\n").unwrap();
    let out = dir.path().join("out");
    let attack = "import os\nfor target in ['../transcript.jsonl', '../run.json', '../solution.py']:\n    try:\n        open(target, 'w').write('x')\n    except OSError as e:\n        print('refused', target)\n\
                  for target in ['../run.json', '../solution.py']:\n    try:\n        os.mkdir(target)\n    except OSError:\n        print('refused dir', target)\n\
                  os.symlink(os.path.realpath('data/points.csv'), 'pred_results/out.csv')\nprint('linked')";
    let lines = [
        call("execute_python", json!({ "code": attack })),
        call("finish", json!({ "summary": "done" })),
        call(
            "execute_python",
            json!({ "code": "import os\nos.remove('pred_results/out.csv')\nopen('pred_results/out.csv', 'w').write('id,value\\n1,3.5\\n')" }),
        ),
        call("finish", json!({ "summary": "done" })),
    ];
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let o = solve_replay(&task, &replay, &out, &[], &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The records are whole: every transcript line parses, run.json and
    // solution.py are files (the cell's writes were refused, or landed in
    // its own private /tmp when the run's folder lies under /tmp).
    let ev = events(&out);
    let observations: Vec<&str> = ev
        .iter()
        .filter(|e| e["event"] == "tool")
        .map(|e| e["observation"].as_str().unwrap())
        .collect();
    assert!(observations[0].contains("linked"), "{}", observations[0]);
    assert!(out.join("run.json").is_file() && out.join("solution.py").is_file());
    assert!(
        observations[1].contains("finish refused") && observations[1].contains("symbolic link"),
        "{}",
        observations[1]
    );
    assert_eq!(run_json(&out)["status"], "finished");
    assert!(out.join("solution.py").is_file());
    assert_eq!(ev.last().unwrap()["event"], "end");
}

#[test]
fn real_world_text_works_utf8_names_values_and_file_names() {
    let (mut s, dir) = common::session();
    std::fs::write(
        dir.path().join("São_Paulo.csv"),
        "cidade,temp\nSão Paulo,23.5\n",
    )
    .unwrap();
    let out = run(
        &mut s,
        "import pandas as pd, sys\ndf = pd.read_csv('São_Paulo.csv')\n\
         open('pred_results/résumé.txt', 'w').write('Température: 23.5 °C')\n\
         print(df.cidade[0], '°C', sys.flags.utf8_mode)",
    );
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    assert_eq!(out.result.stdout.trim(), "São Paulo °C 1");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pred_results/résumé.txt")).unwrap(),
        "Température: 23.5 °C"
    );
}

#[test]
fn hostile_cells_cannot_break_the_bookkeeping() {
    let (mut s, dir) = common::session();
    std::fs::write(
        dir.path()
            .join(std::ffi::OsStr::new(&String::from_utf8_lossy(b"x")[..])),
        "",
    )
    .unwrap();
    for code in [
        "print('\\ud800 lone surrogate')",
        "class Weird:\n    def __getattr__(self, name):\n        raise RuntimeError('no attributes here')\nw = Weird()",
        "class Bad(Exception):\n    def __str__(self):\n        raise ValueError('no str')\nraise Bad()",
        "class Liar:\n    @property\n    def __class__(self):\n        raise KeyError('lie')\n    def __repr__(self):\n        raise SystemExit('no repr')\nl = Liar()\nl",
        "import os\nopen(os.fsencode('caf\\xe9.txt').replace(b'\\xc3\\xa9', b'\\xe9'), 'w').write('x')\nprint(os.listdir('.'))",
        "globals()['x' * 100000] = 1",
        "import builtins\nbuiltins.len = None\nbuiltins.isinstance = None\nbuiltins.repr = None\nnew_var = [1, 2]",
    ] {
        let out = s.execute(code).unwrap_or_else(|e| panic!("the sandbox failed on {code:?}: {e}"));
        assert!(
            matches!(out.status, CellStatus::Ok | CellStatus::Error),
            "{code}: {:?}",
            out.status
        );
    }
    // The builtins stay broken for the user (their choice), not for gisclaw.
    let out = run(
        &mut s,
        "import builtins, importlib\nimportlib.reload(builtins)\nprint('reported')",
    );
    assert!(
        out.result.stdout.contains("reported") || out.result.error.is_some(),
        "{:?}",
        out.result
    );
    let (mut fresh, _d) = common::session();
    still_works(&mut fresh);
}

#[test]
fn the_package_constraint_holds_when_the_finder_is_removed() {
    let (mut s, dir) = common::session();
    std::fs::write(dir.path().join("arcpy.py"), "print('arcpy imported')\n").unwrap();
    let out = run(
        &mut s,
        // Inside a block, so that the import reaches the worker (a top-level
        // one is refused before the cell runs).
        "import sys\nsys.path.insert(0, '.')\nsys.meta_path.pop(0)\nif True:\n    import arcpy",
    );
    let err = out.result.error.expect("refused");
    assert!(err.evalue.contains("package constraint"), "{err:?}");
    assert!(!out.result.stdout.contains("arcpy imported"));
    still_works(&mut s);
}

#[test]
fn an_over_large_cell_comes_back_as_an_observation() {
    let (mut s, _dir) = common::session();
    let code = format!(
        "x = '{}'",
        "a".repeat(gisclaw::sandbox::MAX_CODE_BYTES + 10)
    );
    let out = s.execute(&code).expect("not a sandbox failure");
    let err = out.result.error.expect("refused");
    assert_eq!(err.ename, "CodeTooLarge");
    assert!(err.evalue.contains("bytes"), "{}", err.evalue);
    still_works(&mut s);
}

#[test]
fn inherited_descriptors_do_not_reach_a_session() {
    let dir = common::workdir();
    let script = dir.path().join("fds.py");
    std::fs::write(
        &script,
        "import os\nfor f in sorted(os.listdir('/proc/self/fd'), key=int):\n    try:\n        print('fd', f, os.readlink('/proc/self/fd/' + f))\n    except OSError as e:\n        print('fd', f, e)",
    )
    .unwrap();
    let leaked = std::fs::File::open("/etc/hostname").unwrap();
    let mut command = common::gisclaw_command(
        &[
            "exec",
            script.to_str().unwrap(),
            "--workdir",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let fd = leaked.as_raw_fd();
    // SAFETY: dup2 onto fd 9 without close-on-exec, in the child before exec.
    unsafe {
        command.pre_exec(move || {
            libc::dup2(fd, 9);
            Ok(())
        });
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // By what each descriptor is, not its number: the session's own
    // channel may land on 9 when the warm service has other clients.
    let fds: Vec<&str> = stdout.lines().filter(|l| l.starts_with("fd ")).collect();
    assert!(!fds.is_empty(), "{stdout}");
    assert!(
        !fds.iter().any(|l| l.ends_with("/etc/hostname")),
        "the leaked descriptor reached the session: {stdout}"
    );
}

#[test]
fn a_signalled_solve_ends_as_interrupted_and_leaves_no_temporary_folders() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(&task, "id: sleepy\ntitle: Sleepy\ninstruction: Wait.\ndata: data\noutputs:\n  - pred_results/x.txt\n").unwrap();
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(
        &replay,
        call(
            "execute_python",
            json!({ "code": "import time\ntime.sleep(600)" }),
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let tmp = private_tmp();
    let mut child = solve_replay_command(
        &task,
        &replay,
        &out,
        &[],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
    )
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.join("transcript.jsonl").is_file()
        || !std::fs::read_to_string(out.join("transcript.jsonl"))
            .unwrap()
            .contains("\"message\"")
    {
        assert!(Instant::now() < deadline, "the run did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: plain kill of our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    let run = run_json(&out);
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(run["reason"].as_str().unwrap().contains("SIGTERM"), "{run}");
    assert_eq!(events(&out).last().unwrap()["event"], "end");
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
}

/// A temp dir of gisclaw's own (its `TMPDIR`), so that what it leaves
/// behind is told apart from other tests' sessions.
fn private_tmp() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    dir
}

/// What is left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_signalled_exec_stops_its_cell_and_leaves_no_temporary_folders() {
    let dir = common::workdir();
    let tmp = private_tmp();
    let script = dir.path().join("slow.py");
    std::fs::write(
        &script,
        "print('started', flush=True)\nimport time\ntime.sleep(600)\n# %%\nprint('never')\n",
    )
    .unwrap();
    let child = common::gisclaw_command(
        &[
            "exec",
            script.to_str().unwrap(),
            "--workdir",
            dir.path().to_str().unwrap(),
        ],
        &[("TMPDIR", tmp.path().to_str().unwrap())],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while leftovers(tmp.path()).is_empty() {
        assert!(Instant::now() < deadline, "no session started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: plain kill of our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let text = common::text(&out);
    assert_eq!(out.status.code(), Some(128 + libc::SIGTERM), "{text}");
    assert!(
        text.contains("stopped by SIGTERM") && !text.contains("never"),
        "{text}"
    );
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_kill_signal_is_named() {
    let (mut s, _dir) = common::session();
    let out = run(&mut s, "import os, signal\nos.kill(os.getpid(), 31)");
    let text = gisclaw::observation::render(&out);
    assert!(text.contains("SIGSYS"), "{text}");
    still_works(&mut s);
}

#[test]
fn a_symlink_cycle_in_the_data_is_listed_once_and_marked() {
    let dir = common::workdir();
    std::fs::write(dir.path().join("a.csv"), "x\n1\n").unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("self")).unwrap();
    let card = gisclaw::card::card_for_dir(dir.path(), "data/", 2_000);
    assert!(
        card.contains("data/self/ — a link to a folder already listed"),
        "{card}"
    );
    assert_eq!(gisclaw::card::files_under(dir.path()).len(), 1);
    let mut f = std::fs::File::create(dir.path().join("b.csv")).unwrap();
    f.write_all(b"y\n2\n").unwrap();
    assert_eq!(gisclaw::card::files_under(dir.path()).len(), 2);
}

// ---- The JavaScript runtime (GeoJSEval's cases, a model's JS) ----------
//
// Each attack first leaves the call's realm the way a red team would (the
// outer realm's `Function` reached through an object the worker put in
// the window), so what is tested is the process's confinement, not the
// realm: JavaScript realms are no security boundary.

/// Code that reaches the worker's own `process` and `require`.
const ESCAPE: &str = "const outer = TextEncoder.constructor('return process')();\n\
                      const req = outer.mainModule.require;\n";

/// The runtime still answers an ordinary call correctly.
fn js_still_works(runtime: &mut gisclaw::js::JsRuntime) {
    let call = common::js_call(
        "function f(p) { return turf.area(turf.polygon(p)); }",
        &["[[[0,0],[1,0],[1,1],[0,1],[0,0]]]"],
    );
    let area = common::js_value(runtime, &call).as_f64().unwrap();
    assert!((area - 12_363_718_145.18).abs() < 1.0, "{area}");
}

/// How a call that must lose the worker ended (it panics when the call
/// was answered).
fn js_lost(runtime: &mut gisclaw::js::JsRuntime, code: &str) -> gisclaw::js::Lost {
    match runtime.call(&common::js_call(code, &[])).unwrap() {
        gisclaw::js::CallOutcome::Lost(lost) => lost,
        answered => panic!("{code}: answered {answered:?}"),
    }
}

/// What an escaped call returned, as text.
fn js_text(runtime: &mut gisclaw::js::JsRuntime, body: &str) -> String {
    let call = common::js_call(&format!("async function f() {{\n{ESCAPE}{body}\n}}"), &[]);
    match common::js_value(runtime, &call) {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    }
}

#[test]
fn js_the_realm_escape_these_tests_use_reaches_the_worker_process() {
    // Without this, every attack below could pass for the wrong reason.
    let mut rt = common::js_runtime(Duration::from_secs(10));
    let title = js_text(&mut rt, "return typeof req + ' ' + outer.version;");
    assert!(title.starts_with("function v"), "{title}");
    let info = rt.worker().unwrap().info().clone();
    let confinement = info
        .confinement
        .expect("the worker reports its confinement");
    assert!(confinement.network.is_active(), "{confinement:?}");
    assert!(confinement.filesystem.is_active(), "{confinement:?}");
    assert!(confinement.rlimits.is_active(), "{confinement:?}");
    for lib in ["turf", "jsts", "geolib", "leaflet", "ol"] {
        assert!(info.libraries.contains_key(lib), "{:?}", info.libraries);
    }
}

#[test]
fn js_calls_cannot_reach_the_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut rt = common::js_runtime(Duration::from_secs(10));
    let said = js_text(
        &mut rt,
        &format!(
            "try {{ const s = req('net').connect({port}, '127.0.0.1'); \
               return await new Promise(r => {{ s.on('connect', () => r('connected')); \
               s.on('error', e => r('refused: ' + e.code)); }}); }} \
             catch (e) {{ return 'refused: ' + (e.code || e.message); }}"
        ),
    );
    assert!(said.starts_with("refused"), "{said}");
    // Node's own fetch.
    let fetched = js_text(
        &mut rt,
        &format!(
            "try {{ const r = await outer.constructor.constructor('return fetch')()('http://127.0.0.1:{port}/'); \
               return 'fetched ' + r.status; }} \
             catch (e) {{ return 'refused: ' + ((e.cause && e.cause.code) || e.message); }}"
        ),
    );
    assert!(fetched.starts_with("refused"), "{fetched}");
    assert!(listener.accept().is_err(), "a connection reached the host");
    js_still_works(&mut rt);
}

#[test]
fn js_calls_cannot_read_or_write_outside_their_folders() {
    let outside = common::workdir();
    let canary = outside.path().join("canary.txt");
    std::fs::write(&canary, "canary-7f3a").unwrap();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let mut rt = common::js_runtime(Duration::from_secs(10));
    for (path, verb) in [
        (canary.display().to_string(), "read"),
        (format!("{home}/.bashrc"), "read"),
        ("/etc/shadow".to_string(), "read"),
        (
            outside.path().join("dropped.txt").display().to_string(),
            "write",
        ),
        ("/tmp/gisclaw-js-escape.txt".to_string(), "write"),
    ] {
        let op = if verb == "read" {
            format!("req('fs').readFileSync({path:?}, 'utf8')")
        } else {
            format!("req('fs').writeFileSync({path:?}, 'pwned')")
        };
        let said = js_text(
            &mut rt,
            &format!("try {{ const got = {op}; return 'done: ' + got; }} catch (e) {{ return 'refused: ' + e.code; }}"),
        );
        assert!(said.starts_with("refused"), "{verb} {path}: {said}");
    }
    assert!(!outside.path().join("dropped.txt").exists());
    assert!(!Path::new("/tmp/gisclaw-js-escape.txt").exists());
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "canary-7f3a");
    js_still_works(&mut rt);
}

#[test]
fn js_calls_see_no_host_environment() {
    let mut rt = common::js_runtime(Duration::from_secs(10));
    let env = js_text(&mut rt, "return JSON.stringify(outer.env);");
    let env: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&env).unwrap();
    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
    assert!(
        keys.iter()
            .all(|k| ["PATH", "LANG", "TZ", "HOME", "UV_USE_IO_URING"].contains(k)),
        "{keys:?}"
    );
    // Nor through /proc: the launcher's and gisclaw's blocks are not in view.
    let environs = js_text(
        &mut rt,
        "const fs = req('fs'); const out = []; let pids; \
         try { pids = fs.readdirSync('/proc'); } catch (e) { return 'refused: ' + e.message; } \
         for (const p of pids) { if (!/^\\d+$/.test(p)) continue; \
           try { out.push(p + ':' + fs.readFileSync('/proc/' + p + '/environ', 'latin1').length); } catch (e) {} } \
         return out.join(' ');",
    );
    assert!(
        !environs.contains("CARGO"),
        "a host environment is readable: {environs}"
    );
    js_still_works(&mut rt);
}

#[test]
fn js_calls_cannot_start_programs_and_nothing_outlives_the_runtime() {
    let mut rt = common::js_runtime(Duration::from_secs(10));
    let node = rt.worker().unwrap().info().node.clone();
    let major: u32 = node
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 20 {
        // Debian's Node 18 has no permission model: a program may start,
        // but inside the worker's confinement (no file outside in view).
        let outside = common::workdir();
        let canary = outside.path().join("canary.txt");
        std::fs::write(&canary, "canary-18").unwrap();
        let said = js_text(
            &mut rt,
            &format!(
                "try {{ return 'ran: ' + req('child_process').execSync('cat {}').toString(); }} catch (e) {{ return 'refused: ' + e.status; }}",
                canary.display()
            ),
        );
        assert!(!said.contains("canary-18"), "Node {node}: {said}");
        eprintln!("Node {node} has no permission model: programs start, confined");
        js_still_works(&mut rt);
        return;
    }
    for how in [
        "req('child_process').execSync('id').toString()",
        "outer.binding('spawn_sync') && 'bound'",
        "new (req('worker_threads').Worker)('1', { eval: true }) && 'thread'",
    ] {
        let said = js_text(
            &mut rt,
            &format!(
                "try {{ return 'ran: ' + ({how}); }} catch (e) {{ return 'refused: ' + e.code; }}"
            ),
        );
        assert!(said.starts_with("refused"), "{how}: {said}");
    }
    js_still_works(&mut rt);
    // Each worker's command line names its own case folder.
    let marker = rt.worker().unwrap().case_dir().display().to_string();
    assert!(!processes_with(&marker).is_empty(), "the worker is running");
    drop(rt);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_with(&marker), Vec::<String>::new());
}

#[test]
fn js_an_endless_loop_is_cut_at_the_limit_and_the_next_call_runs() {
    let mut rt = common::js_runtime(Duration::from_secs(2));
    // A plain loop: the worker's own limit ends it, the worker lives on.
    let looped = rt
        .call(&common::js_call("function f() { while (true) {} }", &[]))
        .unwrap();
    match looped {
        gisclaw::js::CallOutcome::Answered(a) => {
            assert!(!a.ok);
            assert_eq!(a.error.unwrap().name, "Timeout");
        }
        other => panic!("{other:?}"),
    }
    js_still_works(&mut rt);
    assert_eq!(rt.starts, 1, "the worker survived the loop");
    // A loop of promises never yields to the worker's timer: the host's
    // limit kills the worker, and the next call gets a new one.
    let started = Instant::now();
    let starved = js_lost(
        &mut rt,
        "async function f() { while (true) { await null; } }",
    );
    assert!(
        matches!(starved, gisclaw::js::Lost::Timeout(_)),
        "{starved:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    js_still_works(&mut rt);
    assert_eq!(rt.starts, 2);
    // A call that answers, then leaves the worker spinning: the next
    // request (large enough to fill the pipe) never blocks gisclaw; it is
    // cut at the limit and the call after it gets a new worker.
    let _ = rt
        .call(&common::js_call(
            "function f() { TextEncoder.constructor('setTimeout(() => { for (;;) {} }, 0)')(); return 1; }",
            &[],
        ))
        .unwrap();
    let padded = format!(
        "function f() {{ return 2; }}\n/*{}*/",
        "x".repeat(256 << 10)
    );
    let started = Instant::now();
    let stuck = js_lost(&mut rt, &padded);
    assert!(matches!(stuck, gisclaw::js::Lost::Timeout(_)), "{stuck:?}");
    assert!(started.elapsed() < Duration::from_secs(30));
    js_still_works(&mut rt);
    assert_eq!(rt.starts, 3);
}

#[test]
fn js_a_huge_allocation_is_contained_and_the_next_call_runs() {
    let mut rt = common::js_runtime(Duration::from_secs(20));
    // One buffer past the address-space limit: an error the call sees.
    let said = js_text(
        &mut rt,
        "try { new ArrayBuffer(32 * 1024 ** 3); return 'allocated'; } catch (e) { return 'refused: ' + e.name; }",
    );
    assert_eq!(said, "refused: RangeError");
    js_still_works(&mut rt);
    // A heap that grows past V8's limit: the worker dies, the call is lost.
    let grown = js_lost(
        &mut rt,
        "function f() { const keep = []; while (true) keep.push(new Array(1e6).fill(1.5)); }",
    );
    assert!(matches!(grown, gisclaw::js::Lost::Died(_)), "{grown:?}");
    js_still_works(&mut rt);
}

#[test]
fn the_runtime_hands_no_api_key_to_javascript_even_when_gisclaw_holds_one() {
    // A "suite" whose reference dumps what the worker's process can see of
    // environments, run by gisclaw with keys in its own environment.
    let dir = common::workdir();
    let suite = dir.path().join("suite");
    std::fs::create_dir_all(suite.join("cases")).unwrap();
    std::fs::write(
        suite.join("cases/env.yaml"),
        r#"library: turf
tasks:
  - id: env
    data_type: geometry
    operation: io
    function_header: "function T_env() {}"
    reference_code: |
      function T_env() {
        const outer = TextEncoder.constructor('return process')();
        const fs = outer.mainModule.require('fs');
        let proc = '';
        for (const p of ['/proc/self/environ', '/proc/1/environ']) {
          try { proc += fs.readFileSync(p, 'latin1'); } catch (e) { proc += e.code; }
        }
        return JSON.stringify(outer.env) + proc;
      }
    output_type: String
    parameters_list: [{params: {}}]
"#,
    )
    .unwrap();
    let run = common::gisclaw(
        &["bench", "expect", suite.to_str().unwrap()],
        &[
            ("OPENAI_API_KEY", "sk-js-secret-4242"),
            ("ANTHROPIC_API_KEY", "sk-js-secret-4242"),
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen = std::fs::read_to_string(suite.join("expected.json")).unwrap();
    assert!(seen.contains("PATH"), "the dump ran: {seen}");
    assert!(!seen.contains("sk-js-secret-4242"), "{seen}");
    assert!(!seen.contains("OPENAI_API_KEY"), "{seen}");
}

#[test]
fn js_a_call_that_answers_for_later_calls_is_caught_and_never_reaches_another_solution() {
    // The call leaves its realm and answers every later request itself,
    // with the request's own number, before the worker can.
    let forger = "outer.stdin.on('data', (d) => { for (const line of String(d).split('\\n')) { \
                    if (!line.trim()) continue; const id = JSON.parse(line).id; \
                    req('fs').writeSync(1, JSON.stringify({id, ok: true, kind: 'Number', value: 42}) + '\\n'); } }); \
                  return 'armed';";
    let mut rt = common::js_runtime(Duration::from_secs(10));
    assert_eq!(js_text(&mut rt, forger), "armed");
    // Its own solution's next call may get its forged answer; the worker's
    // real answer then arrives outside any call, and the call after that
    // finds it and stops the worker.
    let area = common::js_call(
        "function f(p) { return turf.area(turf.polygon(p)); }",
        &["[[[0,0],[1,0],[1,1],[0,1],[0,0]]]"],
    );
    let _ = rt.call(&area).unwrap();
    let caught = rt.call(&area).unwrap();
    assert!(
        matches!(
            caught,
            gisclaw::js::CallOutcome::Lost(gisclaw::js::Lost::Garbled(_))
        ),
        "{caught:?}"
    );
    js_still_works(&mut rt);
    // Another solution never shares its worker (eval restarts between
    // samples): the forger's answers cannot reach it.
    assert_eq!(js_text(&mut rt, forger), "armed");
    rt.restart();
    js_still_works(&mut rt);
    js_still_works(&mut rt);
}
