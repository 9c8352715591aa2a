//! The confined side of the JavaScript runtime: `gisclaw __js`, started
//! by [`super::JsWorker::start`]. It confines itself as the reader does
//! (`crate::reader`: new user, mount, PID, IPC and network namespaces; a
//! minimal view holding the system directories, the runtime's folder
//! read-only and the case's folder writable; the sandbox's user; rlimits,
//! no-new-privs, no capabilities, Landlock, seccomp with no sockets), then
//! becomes Node (`execve`, so every layer stays in force) running
//! `worker.js` with an empty environment and Node's own permission model.
//! Node is PID 1 of the namespace: when it ends, whatever it started ends.
//!
//! Descriptors on entry: 0 a pipe from the host (one line, [`Envelope`];
//! then the calls, which Node reads), 1 Node's answers, 2 its errors, 3
//! the namespace handshake with the host. Everything else is closed.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gisclaw_confine::{confine, isolate};
use gisclaw_protocol::{ConfinementPolicy, ConfinementReport, LayerStatus};
use serde::{Deserialize, Serialize};

use crate::reader::serve::{
    close_above, in_own_namespaces, sandbox_user_without_namespaces, Scratch,
};

/// The descriptor of the namespace handshake.
const SYNC_FD: i32 = 3;

/// The runtime's address-space limit (V8 reserves far more than it uses).
const MEMORY_LIMIT: u64 = 8 << 30;
/// The largest file a call may write.
const FILE_LIMIT: u64 = 256 << 20;
/// Processes and threads (Node runs about a dozen threads).
const PROCESS_LIMIT: u64 = 64;

/// What `gisclaw __js` is started with: its first line on standard input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope {
    /// The Node program (its real path).
    pub node: PathBuf,
    /// The runtime's folder: `worker.js` and `node_modules/`, read-only.
    pub js_dir: PathBuf,
    /// The case's folder: the worker's working folder, writable.
    pub case_dir: PathBuf,
    /// The host's empty folder (0700) for the stage and `/tmp`.
    pub scratch: PathBuf,
    /// V8's heap limit in MiB (`--max-old-space-size`).
    pub heap_mb: u64,
    /// Node's permission-model flag for its version, if it has one
    /// (`--permission`, or `--experimental-permission` on Node 20–22).
    pub permission_flag: Option<String>,
}

/// Runs `gisclaw __js`; returns only when it could not become Node.
pub fn serve() -> ExitCode {
    match start() {
        Ok(code) => code,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "gisclaw js: {why}");
            ExitCode::from(3)
        }
    }
}

fn start() -> Result<ExitCode, String> {
    let mut line = Vec::new();
    std::io::BufRead::read_until(
        &mut std::io::stdin().lock().take(64 << 10),
        b'\n',
        &mut line,
    )
    .map_err(|e| format!("reading the envelope: {e}"))?;
    let envelope: Envelope =
        serde_json::from_slice(&line).map_err(|e| format!("the envelope: {e}"))?;
    // SAFETY: descriptor 3 was set up by the host for this process alone.
    let sync = unsafe { UnixStream::from_raw_fd(SYNC_FD) };
    close_above(SYNC_FD);
    let scratch = Scratch::new(&envelope.scratch)?;
    in_own_namespaces(sync, "js", |net| {
        let why = match confine_here(&envelope, net, &scratch) {
            Ok(report) => become_node(&envelope, &report),
            Err(why) => why,
        };
        let _ = writeln!(std::io::stderr(), "gisclaw js: {why}");
        6
    })
}

/// The folder holding `program` that the view must show: none when it is
/// under the system directories the view always holds; a Node install's
/// own prefix (the folder above `bin/` that holds `include/node` or
/// `lib/node_modules`, as nvm and the official tarballs lay it out);
/// else the program's folder alone — never a home folder that happens to
/// hold a `bin/`.
pub fn program_root(program: &Path) -> Option<PathBuf> {
    const SYSTEM: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt"];
    if SYSTEM.iter().any(|dir| program.starts_with(dir)) {
        return None;
    }
    let dir = program.parent()?;
    let prefix = dir
        .parent()
        .filter(|_| dir.file_name().is_some_and(|n| n == "bin"))
        .filter(|p| p.join("include/node").is_dir() || p.join("lib/node_modules").is_dir());
    Some(prefix.unwrap_or(dir).to_path_buf())
}

/// Applies every layer; the report, or why the runtime may not start.
fn confine_here(
    envelope: &Envelope,
    net: Option<bool>,
    scratch: &Scratch,
) -> Result<ConfinementReport, String> {
    let mut read_only = vec![envelope.js_dir.clone()];
    read_only.extend(program_root(&envelope.node));
    let (namespaces, tmp) = match net {
        Some(net) => {
            isolate::build_view(&isolate::ViewSpec {
                stage: &scratch.stage(),
                read_only: read_only.clone(),
                writable: vec![envelope.case_dir.clone()],
                read_only_fds: Vec::new(),
                tmp: &scratch.tmp(),
            })?;
            // The change of user in the view cleared it: armed again.
            // SAFETY: prctl with integer arguments.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            let detail = if net {
                "user, mount, PID, IPC and network namespaces; the libraries read-only, the case's folder writable"
            } else {
                "user, mount, PID and IPC namespaces (no network namespace)"
            };
            (LayerStatus::Enforced(detail.into()), PathBuf::from("/tmp"))
        }
        None => {
            sandbox_user_without_namespaces()?;
            (
                LayerStatus::Unsupported("the kernel refused new namespaces".into()),
                scratch.tmp(),
            )
        }
    };
    std::env::set_current_dir(&envelope.case_dir).map_err(|e| format!("chdir: {e}"))?;
    let policy = ConfinementPolicy {
        write_roots: vec![envelope.case_dir.clone(), tmp],
        allow_network: false,
        memory_limit_bytes: Some(MEMORY_LIMIT),
        file_size_limit_bytes: Some(FILE_LIMIT),
        read_roots: read_only.clone(),
        namespaces: true,
        process_limit: Some(PROCESS_LIMIT),
        confine: true,
    };
    let report = confine::apply(&policy, namespaces, &read_only);
    // Fail closed: a runtime that could see more than its folders, or
    // reach the network, does not start.
    let seen = report.namespaces.is_active() || report.filesystem.is_active();
    let cut_off = net == Some(true) || report.network.is_active();
    if !seen || !cut_off {
        return Err(format!(
            "not started: the JavaScript runtime could not be confined here ({})",
            report.warnings().join("; ")
        ));
    }
    Ok(report)
}

/// The command line Node is started with: its flags, the worker, and the
/// confinement report (which the worker hands back in its first line).
pub fn node_argv(envelope: &Envelope, report: &str) -> Vec<String> {
    let js = envelope.js_dir.display().to_string();
    let case = envelope.case_dir.display().to_string();
    let mut argv = vec![
        envelope.node.display().to_string(),
        "--no-warnings".into(),
        // The worker collects closed realms itself (worker.js, GC_ABOVE).
        "--expose-gc".into(),
        format!("--max-old-space-size={}", envelope.heap_mb),
    ];
    if let Some(flag) = &envelope.permission_flag {
        argv.push(flag.clone());
        argv.push(format!("--allow-fs-read={js}"));
        argv.push(format!("--allow-fs-read={case}"));
        argv.push(format!("--allow-fs-write={case}"));
    }
    argv.push(format!("{js}/worker.js"));
    argv.push(report.to_string());
    argv
}

/// The environment Node gets: nothing of the host's.
const NODE_ENV: &[&str] = &[
    "PATH=/usr/bin:/bin",
    "LANG=C.UTF-8",
    "TZ=UTC",
    "HOME=/tmp",
    "UV_USE_IO_URING=0",
];

/// Replaces this process with Node; returns why it could not.
fn become_node(envelope: &Envelope, report: &ConfinementReport) -> String {
    let report = serde_json::to_string(report).unwrap_or_else(|_| "{}".into());
    let to_c = |text: &str| CString::new(text.as_bytes()).ok();
    let argv: Option<Vec<CString>> = node_argv(envelope, &report)
        .iter()
        .map(|a| to_c(a))
        .collect();
    let env: Option<Vec<CString>> = NODE_ENV.iter().map(|e| to_c(e)).collect();
    let (Some(argv), Some(env)) = (argv, env) else {
        return "a NUL in Node's command line".into();
    };
    let Ok(program) = CString::new(envelope.node.as_os_str().as_bytes()) else {
        return "a NUL in Node's path".into();
    };
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    let _ = std::io::stderr().flush();
    // SAFETY: every pointer is a NUL-terminated string kept alive above,
    // and both arrays end with a null pointer.
    unsafe { libc::execve(program.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr()) };
    format!(
        "{}: {}",
        envelope.node.display(),
        std::io::Error::last_os_error()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(flag: Option<&str>) -> Envelope {
        Envelope {
            node: PathBuf::from("/usr/bin/node"),
            js_dir: PathBuf::from("/opt/gisclaw/js"),
            case_dir: PathBuf::from("/tmp/case"),
            scratch: PathBuf::from("/tmp/scratch"),
            heap_mb: 1024,
            permission_flag: flag.map(String::from),
        }
    }

    #[test]
    fn node_reads_only_the_runtime_and_writes_only_the_case() {
        let argv = node_argv(&envelope(Some("--permission")), "{}");
        assert!(argv.contains(&"--permission".to_string()));
        assert!(argv.contains(&"--allow-fs-read=/opt/gisclaw/js".to_string()));
        assert!(argv.contains(&"--allow-fs-write=/tmp/case".to_string()));
        assert!(!argv.iter().any(|a| a.starts_with("--allow-child-process")));
        assert_eq!(argv[argv.len() - 2], "/opt/gisclaw/js/worker.js");
        let without = node_argv(&envelope(None), "{}");
        assert!(!without.iter().any(|a| a.starts_with("--allow-fs")));
    }

    #[test]
    fn a_node_outside_the_system_folders_brings_its_prefix_into_view() {
        assert_eq!(program_root(Path::new("/usr/bin/node")), None);
        // A Node install's prefix comes into view; a home with a `bin/`
        // does not: only the program's own folder.
        let home = tempfile::tempdir().unwrap();
        let install = home.path().join(".nvm/versions/node/v20");
        std::fs::create_dir_all(install.join("include/node")).unwrap();
        std::fs::create_dir_all(install.join("bin")).unwrap();
        std::fs::create_dir_all(home.path().join("bin")).unwrap();
        assert_eq!(
            program_root(&install.join("bin/node")),
            Some(install.clone())
        );
        assert_eq!(
            program_root(&home.path().join("bin/node")),
            Some(home.path().join("bin"))
        );
    }
}
