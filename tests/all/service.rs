//! The per-user sandbox service (the warm zygote commands share): reused
//! by later commands, replaced when killed, one per settings, started once
//! when two commands race, refusing other users, exiting when idle or
//! stopped, and off with `--no-daemon`. Each test has its own runtime
//! folder (`GISCLAW_RUNTIME_DIR`). The containment of the sessions it forks
//! is what every in-process sandbox test checks (`common::zygote` is the
//! service's).

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{alive, gisclaw, gisclaw_command, text};

/// A runtime folder and a work dir with a one-cell script.
struct Fixture {
    _dir: tempfile::TempDir,
    runtime: PathBuf,
    work: PathBuf,
    script: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = common::workdir();
        let runtime = dir.path().join("run");
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let script = dir.path().join("cell.py");
        std::fs::write(&script, "print('answer', 6 * 7)\n").unwrap();
        Fixture {
            runtime,
            work,
            script,
            _dir: dir,
        }
    }

    /// `gisclaw ARGS` with this fixture's runtime folder.
    fn run(&self, args: &[&str], envs: &[(&str, &str)]) -> Output {
        let mut all = vec![("GISCLAW_RUNTIME_DIR", self.runtime.to_str().unwrap())];
        all.extend_from_slice(envs);
        gisclaw(args, &all)
    }

    /// `gisclaw exec` of the one-cell script; asserts it ran.
    fn exec(&self, extra: &[&str], envs: &[(&str, &str)]) {
        let mut args = vec![
            "exec",
            self.script.to_str().unwrap(),
            "--workdir",
            self.work.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = self.run(&args, envs);
        assert!(
            out.status.success() && text(&out).contains("answer 42"),
            "{}",
            text(&out)
        );
    }

    /// `gisclaw sandbox status`.
    fn status(&self) -> String {
        let out = self.run(&["sandbox", "status"], &[]);
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    }

    /// The pids `status` names.
    fn pids(&self) -> Vec<i32> {
        self.status()
            .split("pid ")
            .skip(1)
            .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
            .collect()
    }

    /// The service sockets in the runtime folder.
    fn sockets(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.runtime)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "sock"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.run(&["sandbox", "stop"], &[]);
    }
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

#[test]
fn later_commands_reuse_the_warm_service_and_a_killed_one_is_replaced() {
    let f = Fixture::new();
    f.exec(&[], &[]);
    let first = f.pids();
    assert_eq!(first.len(), 1, "{}", f.status());
    f.exec(&[], &[]);
    f.exec(&[], &[]);
    let status = f.status();
    assert_eq!(f.pids(), first, "{status}");
    assert!(status.contains("3 session(s) forked"), "{status}");
    assert!(status.contains("(this shell's)"), "{status}");
    // It holds no command's folder.
    assert_eq!(
        std::fs::read_link(format!("/proc/{}/cwd", first[0])).unwrap(),
        Path::new("/")
    );
    let meta = std::fs::metadata(&f.runtime).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    assert_eq!(
        std::fs::metadata(&f.sockets()[0])
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );

    // SIGKILL: the next command starts a fresh service without a word.
    unsafe { libc::kill(first[0], libc::SIGKILL) };
    assert!(wait_until(Duration::from_secs(5), || !alive(
        first[0] as u32
    )));
    f.exec(&[], &[]);
    let second = f.pids();
    assert_eq!(second.len(), 1, "{}", f.status());
    assert_ne!(second, first);
}

#[test]
fn other_settings_get_their_own_service_and_no_daemon_starts_none() {
    let f = Fixture::new();
    f.exec(&["--no-daemon"], &[]);
    assert!(
        f.status().contains("no sandbox service runs"),
        "{}",
        f.status()
    );
    f.exec(&[], &[]);
    // Another environment for the sessions: another service.
    f.exec(&[], &[("GDAL_CACHEMAX", "64")]);
    assert_eq!(f.sockets().len(), 2, "{:?}", f.sockets());
    f.exec(&[], &[("GDAL_CACHEMAX", "64")]);
    assert_eq!(f.sockets().len(), 2);
    // Another shell's PATH (a pyenv's shims first) is not another setting:
    // the sessions' PATH is their own.
    let shell_path = format!(
        "/tmp/pyenv/shims:{}",
        std::env::var("PATH").unwrap_or_default()
    );
    f.exec(&[], &[("PATH", shell_path.as_str())]);
    assert_eq!(f.sockets().len(), 2, "{:?}", f.sockets());

    let out = f.run(&["sandbox", "stop"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(text(&out).matches("stopped ").count(), 2, "{}", text(&out));
    assert!(f.sockets().is_empty(), "{:?}", f.sockets());
    assert!(f.status().contains("no sandbox service runs"));
}

#[test]
fn two_commands_racing_start_one_service() {
    let f = Fixture::new();
    // Two folders: one work folder holds one live session at a time.
    let spawn = |n: usize| {
        let work = f.work.join(format!("racer-{n}"));
        std::fs::create_dir_all(&work).unwrap();
        gisclaw_command(
            &[
                "exec",
                f.script.to_str().unwrap(),
                "--workdir",
                work.to_str().unwrap(),
            ],
            &[("GISCLAW_RUNTIME_DIR", f.runtime.to_str().unwrap())],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    };
    let (a, b) = (spawn(1), spawn(2));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success() && text(&out).contains("answer 42"),
            "{}",
            text(&out)
        );
    }
    assert_eq!(f.pids().len(), 1, "{}", f.status());
    assert_eq!(f.sockets().len(), 1);
}

#[test]
fn an_idle_service_exits_and_leaves_nothing_listening() {
    let f = Fixture::new();
    // Three seconds: long enough that a loaded machine still finds the
    // socket right after the command, short enough to wait for.
    f.exec(&[], &[("GISCLAW_SANDBOX_IDLE", "3")]);
    let sockets = f.sockets();
    assert_eq!(sockets.len(), 1);
    let log = std::fs::read_to_string(format!("{}.log", sockets[0].display())).unwrap();
    let pid: i32 = log
        .split("(pid ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        wait_until(Duration::from_secs(15), || f.sockets().is_empty()
            && !alive(pid as u32)),
        "still there: {:?}, pid {pid} alive {}",
        f.sockets(),
        alive(pid as u32)
    );
    let log = std::fs::read_to_string(format!("{}.log", sockets[0].display())).unwrap();
    assert!(log.contains("idle for"), "{log}");
    // And the next command simply starts one again.
    f.exec(&[], &[]);
}

#[test]
fn another_user_is_refused_even_past_the_folder_and_socket_permissions() {
    if unsafe { libc::geteuid() } != 0 {
        panic!("this test needs root to act as another user (CI runs as root)");
    }
    let f = Fixture::new();
    f.exec(&[], &[]);
    let socket = f.sockets().remove(0);
    // The first two layers (a 0700 folder, a 0600 socket) are opened on
    // purpose so that the connection reaches the service's own check.
    std::fs::set_permissions(&f.runtime, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let probe = "import socket, sys\n\
                 s = socket.socket(socket.AF_UNIX)\n\
                 s.settimeout(10)\n\
                 s.connect(sys.argv[1])\n\
                 data = s.recv(65536)\n\
                 print('connected as', __import__('os').getuid(), 'got', len(data), 'bytes')\n";
    let out = Command::new("python3")
        .args(["-c", probe, socket.to_str().unwrap()])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let said = text(&out);
    assert!(said.contains("connected as 65534 got 0 bytes"), "{said}");
    let log = std::fs::read_to_string(format!("{}.log", socket.display())).unwrap();
    assert!(log.contains("refused a connection from uid 65534"), "{log}");
    std::fs::set_permissions(&f.runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The service goes on serving its user.
    f.exec(&[], &[]);
    assert!(f.status().contains("2 session(s) forked"), "{}", f.status());
}

#[test]
fn a_runtime_folder_open_to_others_is_refused_in_one_line() {
    let f = Fixture::new();
    std::fs::create_dir(&f.runtime).unwrap();
    std::fs::set_permissions(&f.runtime, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = f.run(
        &[
            "exec",
            f.script.to_str().unwrap(),
            "--workdir",
            f.work.to_str().unwrap(),
        ],
        &[],
    );
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("refusing the sandbox service's folder"),
        "{said}"
    );
    assert!(said.contains("mode 755"), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");
}

#[test]
fn a_session_of_the_service_cannot_reach_the_service() {
    let f = Fixture::new();
    f.exec(&[], &[]);
    let socket = f.sockets().remove(0);
    // From inside a session: the runtime folder is not in its view, no
    // socket can be made, and no descriptor of the service's is open.
    let script = f.work.join("reach.py");
    std::fs::write(
        &script,
        format!(
            "import os, socket\n\
             print('fds', sorted(os.listdir('/proc/self/fd')))\n\
             links = [os.readlink('/proc/self/fd/' + d) for d in os.listdir('/proc/self/fd') if os.path.exists('/proc/self/fd/' + d)]\n\
             print('sockets open', sum(l.startswith('socket:') for l in links))\n\
             print('lock open', any(l.endswith('.lock') for l in links))\n\
             print('sees folder', os.path.exists({runtime:?}))\n\
             try:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect({socket:?})\n    print('CONNECTED')\n\
             except OSError as e:\n    print('refused', type(e).__name__)\n",
            runtime = f.runtime.to_str().unwrap(),
            socket = socket.to_str().unwrap(),
        ),
    )
    .unwrap();
    let out = f.run(
        &[
            "exec",
            script.to_str().unwrap(),
            "--workdir",
            f.work.to_str().unwrap(),
        ],
        &[],
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("sees folder False"), "{said}");
    assert!(said.contains("refused"), "{said}");
    assert!(!said.contains("CONNECTED"), "{said}");
    // Its own channel to gisclaw only: not the service's listener, nor
    // another client's channel, nor the service's lock.
    assert!(said.contains("sockets open 1\n"), "{said}");
    assert!(said.contains("lock open False"), "{said}");
    // And the service still serves.
    f.exec(&[], &[]);
}
