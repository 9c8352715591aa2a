//! Applying a [`ConfinementPolicy`] to the current process: the one place
//! where the session narrows what user code may do. Called in each session
//! process, inside the namespaces the monitor built (see `isolate`), before
//! any user code runs, and never undone.
//!
//! Layers, each reported on its own so nothing degrades silently:
//! - rlimits: address space (a memory bomb becomes `MemoryError`), file size,
//!   no core dumps, and (inside a user namespace) the process count;
//! - `PR_SET_NO_NEW_PRIVS`, then every capability dropped;
//! - Landlock: read only the system directories, the Python environment,
//!   the data and the session's own directories (no home, config, `/run`,
//!   `/var`, host `/tmp`, nor other processes' `/proc` entries); write only
//!   under the policy's write roots; no TCP bind/connect (ABI ≥ 4); no
//!   abstract Unix sockets or signals outside the sandbox (ABI ≥ 6);
//! - seccomp: no `socket()` at all (`socketpair` stays), no io_uring, no
//!   ptrace or cross-process memory access, no new namespaces, mounts,
//!   keyrings or BPF, and no leaving the session's process group.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gisclaw_protocol::{ConfinementPolicy, ConfinementReport, LayerStatus};
use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, ABI,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The Landlock ABI this code was written against.
const LANDLOCK_ABI: ABI = ABI::V6;

/// The Landlock ABI version the running kernel offers, if any.
pub fn landlock_abi() -> Option<i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attr and size 0 this syscall only reports the ABI.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (v > 0).then_some(v as i32)
}

/// Whether the kernel accepts seccomp filters.
pub fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP has no pointer arguments.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Top-level directories a session may read (besides its own, the Python
/// environment and the data).
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
    "/gnu",
    "/sys/devices/system/cpu",
    "/dev",
];

/// Applies the whole policy to this process and reports each layer.
/// `namespaces` is how the monitor isolated the sandbox; `read_roots` the
/// Python environment and data directories.
pub fn apply(
    policy: &ConfinementPolicy,
    namespaces: LayerStatus,
    read_roots: &[PathBuf],
) -> ConfinementReport {
    let namespaced = namespaces.is_active();
    let rlimits = apply_rlimits(policy, namespaced);
    if !policy.confine {
        return ConfinementReport {
            namespaces,
            capabilities: LayerStatus::Disabled,
            filesystem: LayerStatus::Disabled,
            network: LayerStatus::Disabled,
            no_new_privs: LayerStatus::Disabled,
            rlimits,
        };
    }
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    let nnp = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    let no_new_privs = if nnp == 0 {
        LayerStatus::Enforced("set".into())
    } else {
        LayerStatus::Unsupported(std::io::Error::last_os_error().to_string())
    };
    let filesystem = apply_landlock(policy, namespaced, read_roots);
    let capabilities = match crate::isolate::drop_capabilities() {
        Ok(detail) => LayerStatus::Enforced(detail),
        Err(why) => LayerStatus::Unsupported(why),
    };
    let network = apply_seccomp(policy.allow_network);
    ConfinementReport {
        namespaces,
        capabilities,
        filesystem,
        network,
        no_new_privs,
        rlimits,
    }
}

/// Sets one rlimit (soft and hard) to `value`.
fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: lim is a valid rlimit for the duration of the call.
    if unsafe { libc::setrlimit(resource, &lim) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn apply_rlimits(policy: &ConfinementPolicy, namespaced: bool) -> LayerStatus {
    let mut applied = vec!["no core dumps".to_string()];
    let mut failed = Vec::new();
    if let Err(e) = set_rlimit(libc::RLIMIT_CORE, 0) {
        failed.push(format!("RLIMIT_CORE: {e}"));
    }
    if let Some(bytes) = policy.memory_limit_bytes {
        match set_rlimit(libc::RLIMIT_AS, bytes) {
            Ok(()) => applied.push(format!("address space ≤ {} MiB", bytes >> 20)),
            Err(e) => failed.push(format!("RLIMIT_AS: {e}")),
        }
    }
    if let Some(bytes) = policy.file_size_limit_bytes {
        // Without this, exceeding RLIMIT_FSIZE kills the process with SIGXFSZ
        // instead of failing the write with EFBIG.
        // SAFETY: SIG_IGN is a valid disposition for SIGXFSZ.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
        match set_rlimit(libc::RLIMIT_FSIZE, bytes) {
            Ok(()) => applied.push(format!("files ≤ {} MiB", bytes >> 20)),
            Err(e) => failed.push(format!("RLIMIT_FSIZE: {e}")),
        }
    }
    if let Some(count) = policy.process_limit {
        // The kernel counts RLIMIT_NPROC per user and user namespace: inside
        // the sandbox's own namespace that is the sandbox's processes alone;
        // outside it, every process of the user (and root is exempt).
        if namespaced {
            match set_rlimit(libc::RLIMIT_NPROC, count) {
                Ok(()) => applied.push(format!("≤ {count} processes and threads")),
                Err(e) => failed.push(format!("RLIMIT_NPROC: {e}")),
            }
        } else {
            failed.push("no process-count limit without a user namespace (it would count all of this user's processes)".into());
        }
    }
    if failed.is_empty() {
        LayerStatus::Enforced(applied.join(", "))
    } else {
        LayerStatus::Partial(format!(
            "{}; not in force: {}",
            applied.join(", "),
            failed.join("; ")
        ))
    }
}

/// The paths a session may read: the system directories, `/proc` (only
/// this process's own entries without a PID namespace), and `roots`.
fn readable_paths(namespaced: bool, roots: &[PathBuf], write_roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
    paths.push(if namespaced {
        PathBuf::from("/proc")
    } else {
        // SAFETY: getpid has no preconditions.
        PathBuf::from(format!("/proc/{}", unsafe { libc::getpid() }))
    });
    paths.extend(roots.iter().cloned());
    paths.extend(write_roots.iter().cloned());
    paths.retain(|p| p.exists());
    paths
}

fn apply_landlock(
    policy: &ConfinementPolicy,
    namespaced: bool,
    read_roots: &[PathBuf],
) -> LayerStatus {
    let Some(kernel_abi) = landlock_abi() else {
        return LayerStatus::Unsupported(
            "the kernel offers no Landlock (needs Linux ≥ 5.13 with Landlock enabled)".into(),
        );
    };
    let abi = LANDLOCK_ABI;
    let readable = readable_paths(namespaced, read_roots, &policy.write_roots);
    let mut writable: Vec<&Path> = policy
        .write_roots
        .iter()
        .map(|p| p.as_path())
        .filter(|p| p.exists())
        .collect();
    writable.push(Path::new("/dev/null"));
    if namespaced {
        // The namespace's own /dev/shm, not the host's.
        writable.push(Path::new("/dev/shm"));
    }
    let result = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
        .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(&readable, AccessFs::from_read(abi))))
        // Inside the namespace's minimal view, listing any folder reveals
        // nothing of the host: `os.listdir('/')` works there.
        .and_then(|r| {
            r.add_rules(path_beneath_rules(
                if namespaced { &["/"][..] } else { &[][..] },
                AccessFs::ReadDir,
            ))
        })
        .and_then(|r| r.add_rules(path_beneath_rules(writable, AccessFs::from_all(abi))))
        .and_then(|r| r.restrict_self());
    match result {
        Ok(status) => match status.ruleset {
            RulesetStatus::FullyEnforced => {
                LayerStatus::Enforced(format!("Landlock ABI {kernel_abi}"))
            }
            RulesetStatus::PartiallyEnforced => LayerStatus::Partial(format!(
                "kernel Landlock ABI {kernel_abi} lacks some rights of ABI {}",
                abi as i32
            )),
            RulesetStatus::NotEnforced => {
                LayerStatus::Unsupported("Landlock is not enforced by this kernel".into())
            }
        },
        Err(err) => LayerStatus::Unsupported(format!("Landlock failed: {err}")),
    }
}

/// A rule matching calls whose argument `arg` has any bit of `mask` set
/// (one rule per bit, since seccomp rules in a list are alternatives).
fn any_bit_rules(arg: u8, mask: u64) -> Result<Vec<SeccompRule>, String> {
    (0..64)
        .map(|bit| 1u64 << bit)
        .filter(|b| mask & b != 0)
        .map(|b| {
            SeccompCondition::new(arg, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(b), b)
                .and_then(|cond| SeccompRule::new(vec![cond]))
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// Builds one filter answering `errno` to every call of `syscalls` (each
/// with its rules; an empty list matches every call).
fn filter(syscalls: Vec<(i64, Vec<SeccompRule>)>, errno: i32) -> Result<BpfProgram, String> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let map: BTreeMap<i64, Vec<SeccompRule>> = syscalls.into_iter().collect();
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// The programs described in the module docs.
fn syscall_filters(allow_network: bool) -> Result<Vec<BpfProgram>, String> {
    let namespace_flags = (libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS
        | libc::CLONE_NEWCGROUP) as u64;
    let refused: Vec<(i64, Vec<SeccompRule>)> = [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_perf_event_open,
        libc::SYS_bpf,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_setsid,
        libc::SYS_setpgid,
    ]
    .into_iter()
    .map(|call| (call, Vec::new()))
    .chain(std::iter::once((
        libc::SYS_clone,
        any_bit_rules(0, namespace_flags)?,
    )))
    .collect();
    let mut programs = vec![
        filter(refused, libc::EPERM)?,
        // clone3 passes its flags in memory, which seccomp cannot read: say
        // it does not exist, and the C library falls back to clone.
        filter(vec![(libc::SYS_clone3, Vec::new())], libc::ENOSYS)?,
    ];
    if !allow_network {
        programs.push(filter(vec![(libc::SYS_socket, Vec::new())], libc::EACCES)?);
    }
    Ok(programs)
}

fn apply_seccomp(allow_network: bool) -> LayerStatus {
    if !seccomp_available() {
        return LayerStatus::Unsupported("the kernel offers no seccomp filters".into());
    }
    let applied = syscall_filters(allow_network).and_then(|programs| {
        programs
            .iter()
            .try_for_each(|prog| seccompiler::apply_filter(prog).map_err(|e| e.to_string()))
    });
    match applied {
        Ok(()) if allow_network => LayerStatus::Enforced(
            "seccomp: no ptrace, namespaces, mounts or new sessions; network allowed".into(),
        ),
        Ok(()) => LayerStatus::Enforced(
            "seccomp: no sockets, ptrace, namespaces, mounts or new sessions".into(),
        ),
        Err(err) => LayerStatus::Unsupported(format!("seccomp filter failed: {err}")),
    }
}
