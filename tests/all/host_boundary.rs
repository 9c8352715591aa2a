//! The host side of the trust boundary: what gisclaw itself (often root)
//! reads, walks, embeds or changes on a cell's behalf is never more than the
//! cell could reach. Each test plants what a hostile cell would leave
//! behind (links to root-only files, FIFOs, swapped folders, forked
//! children, patched builtins, huge headers), then shows that gisclaw
//! refused it in one line and the run or session still works.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use common::{call, events, solve_replay};
use gisclaw::sandbox::{CellStatus, Session};
use serde_json::json;

fn run(session: &mut Session, code: &str) -> gisclaw::sandbox::CellOutcome {
    session
        .execute(code)
        .unwrap_or_else(|err| panic!("sandbox failed on {code:?}: {err}"))
}

fn am_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A root-only (0600) file outside every run, holding `secret`.
fn victim(dir: &Path, secret: &str) -> std::path::PathBuf {
    let path = dir.join("victim.csv");
    std::fs::write(&path, format!("name,secret\nroot,{secret}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Runs `code`, written to `work/name`, with `gisclaw exec --workdir work`
/// and `envs`. `own_service`: the command gets its own zygote
/// (`--no-daemon`, its runtime folder in `work`), for variables the shared
/// service was not started with.
fn exec_in(
    work: &Path,
    name: &str,
    code: &str,
    own_service: bool,
    envs: &[(&str, &str)],
) -> std::process::Output {
    let script = work.join(name);
    std::fs::write(&script, code).unwrap();
    let runtime = work.join("runtime");
    let mut args = vec![
        "exec",
        script.to_str().unwrap(),
        "--workdir",
        work.to_str().unwrap(),
    ];
    let mut envs = envs.to_vec();
    if own_service {
        args.push("--no-daemon");
        envs.push(("GISCLAW_RUNTIME_DIR", runtime.to_str().unwrap()));
    }
    common::gisclaw(&args, &envs)
}

#[test]
fn a_forked_child_that_raises_never_answers_for_the_worker() {
    let (mut s, _dir) = common::session();
    let out = run(
        &mut s,
        "import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(0.5)\n    raise RuntimeError('child speaks')\nprint('parent', pid > 0)",
    );
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    assert_eq!(out.result.stdout.trim(), "parent True");
    // The child wakes while the next cell runs: its traceback must not
    // become this cell's answer, and every later answer stays in step.
    let out = run(&mut s, "import time\ntime.sleep(1.5)\nprint('second cell')");
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    assert_eq!(out.result.stdout.trim(), "second cell");
    for i in 0..3 {
        let out = run(&mut s, &format!("print({i} * 2)"));
        assert_eq!(out.result.stdout.trim(), (i * 2).to_string());
    }
    s.variables().expect("the protocol is still in step");
}

#[test]
fn multiprocessing_and_joblib_still_work_in_a_cell() {
    let (mut s, _dir) = common::session();
    // fork, spawn and joblib (loky) run; forkserver needs a Unix socket,
    // which the sandbox refuses (seccomp: no socket()), and says so.
    let code = "import multiprocessing as mp\n\
                results = {}\n\
                for method in ['fork', 'forkserver', 'spawn']:\n\
                \x20   try:\n\
                \x20       with mp.get_context(method).Pool(2) as pool:\n\
                \x20           results[method] = sum(pool.map(abs, range(-9, 1)))\n\
                \x20   except OSError as e:\n\
                \x20       results[method] = type(e).__name__\n\
                from joblib import Parallel, delayed\n\
                results['joblib'] = sum(Parallel(n_jobs=2)(delayed(abs)(-i) for i in range(10)))\n\
                print(results['fork'], results['spawn'], results['joblib'])\nprint(results)";
    let out = run(&mut s, code);
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    assert_eq!(
        out.result.stdout.lines().next(),
        Some("45 45 45"),
        "{}",
        out.result.stdout
    );
    eprintln!("{}", out.result.stdout);
    let out = run(&mut s, "print('after pools')");
    assert_eq!(out.result.stdout.trim(), "after pools");
}

#[test]
fn patched_builtins_break_only_the_cell_that_patched_them() {
    for patch in [
        "builtins.str = None",
        "builtins.list = None",
        "builtins.isinstance = lambda *a: 1/0",
        "builtins.repr = None; builtins.len = None",
    ] {
        let (mut s, _dir) = common::session();
        run(&mut s, "import builtins\nsaved = dict(vars(builtins))");
        let out = run(&mut s, &format!("import builtins\n{patch}"));
        assert_eq!(
            out.status,
            CellStatus::Ok,
            "{patch}: {:?}",
            out.result.error
        );
        let out = run(&mut s, "x = 6 * 7\nprint('still', x)");
        assert_eq!(
            out.result.stdout.trim(),
            "still 42",
            "{patch}: {:?}",
            out.result
        );
        // The cell's own patch is still in force for its code…
        let out = run(&mut s, "1/0");
        assert_eq!(out.status, CellStatus::Error, "{patch}");
        assert!(out.result.error.is_some(), "{patch}");
        // …and a cell can put the builtin back.
        let out = run(
            &mut s,
            "vars(builtins).update(saved)\nprint(str(len([1, 2])))",
        );
        assert_eq!(out.result.stdout.trim(), "2", "{patch}: {:?}", out.result);
        assert!(s.variables().is_ok(), "{patch}");
    }
}

#[test]
fn opening_a_session_never_chowns_through_a_link_or_a_swapped_folder() {
    if !am_root() {
        eprintln!("not root: the hand-over chowns nothing; skipped");
        return;
    }
    let host = tempfile::tempdir().unwrap();
    let etc = host.path().join("etc-copy");
    std::fs::create_dir(&etc).unwrap();
    let shadow = victim(&etc, "shadow-row");
    let work = common::workdir();
    std::fs::create_dir(work.path().join("sub")).unwrap();
    std::fs::write(work.path().join("sub/own.txt"), "cell file").unwrap();
    std::os::unix::fs::symlink(&etc, work.path().join("link")).unwrap();
    // A hard link to the victim (made here as root; a cell could not, but
    // one left by anyone is not handed over).
    std::fs::hard_link(&shadow, work.path().join("hard.csv")).unwrap();
    // A swapper exchanges `sub` and a link to the host tree as fast as it
    // can while sessions open on the folder (the race of the finding).
    let swap_link = work.path().join("swap");
    std::os::unix::fs::symlink(&etc, &swap_link).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let a = std::ffi::CString::new(work.path().join("sub").to_str().unwrap()).unwrap();
        let b = std::ffi::CString::new(swap_link.to_str().unwrap()).unwrap();
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: renameat2 with two NUL-terminated paths.
                unsafe {
                    libc::syscall(
                        libc::SYS_renameat2,
                        libc::AT_FDCWD,
                        a.as_ptr(),
                        libc::AT_FDCWD,
                        b.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                swaps += 1;
            }
            swaps
        })
    };
    for _ in 0..6 {
        let mut s = Session::open(common::zygote(), work.path()).unwrap();
        let out = run(&mut s, "print('open')");
        assert_eq!(out.result.stdout.trim(), "open");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(swapper.join().unwrap() > 0);
    for path in [&etc, &shadow] {
        let meta = std::fs::metadata(path).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid()),
            (0, 0),
            "{} was handed over",
            path.display()
        );
    }
    // Without the swapper, the folder's own files are handed over.
    drop(Session::open(common::zygote(), work.path()).unwrap());

    // The cell's own files were handed over.
    let own = ["sub/own.txt", "swap/own.txt"]
        .iter()
        .map(|p| work.path().join(p))
        .find(|p| p.exists())
        .unwrap();
    assert_eq!(std::fs::metadata(own).unwrap().uid(), 65534);
}

#[test]
fn exec_leaves_the_users_files_as_it_found_them() {
    let work = common::workdir();
    let mine = victim(work.path(), "mine");
    let before = std::fs::metadata(work.path()).unwrap();
    let out = exec_in(
        work.path(),
        "s.py",
        "try:\n    open('victim.csv').read()\n    print('read it')\nexcept OSError:\n    print('refused')\n\
         open('made.txt', 'w').write('x')\nprint('wrote')\n",
        false,
        &[],
    );
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("wrote"), "{text}");
    if am_root() {
        assert!(
            text.contains("refused"),
            "the cell read a root-only file: {text}"
        );
    }
    let meta = std::fs::metadata(&mine).unwrap();
    let after = std::fs::metadata(work.path()).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (before.uid(), 0o600));
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
}

#[test]
fn a_second_live_session_on_one_folder_is_refused_until_the_first_ends() {
    let work = common::workdir();
    let mut first = Session::open(common::zygote(), work.path()).unwrap();
    let err = Session::open(common::zygote(), work.path())
        .err()
        .expect("a second session was opened on the same folder");
    assert!(
        err.to_string()
            .contains("in use by another live gisclaw session"),
        "{err}"
    );
    first.end();
    let mut second = Session::open(common::zygote(), work.path()).unwrap();
    assert_eq!(run(&mut second, "print(1)").result.stdout.trim(), "1");
}

/// The observation of a run's first tool call.
fn first_observation(out: &Path) -> String {
    events(out)
        .iter()
        .find(|e| e["event"] == "tool")
        .map(|e| e["observation"].as_str().unwrap().to_string())
        .unwrap()
}

/// A task with a tiny data folder and one declared output, in `dir`.
fn tiny_task(dir: &Path, output: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/points.csv"), "id,value\n1,3.5\n2,4.5\n").unwrap();
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        format!("id: tiny\ntitle: Tiny\ninstruction: Copy the table.\ndata: data\noutputs:\n  - pred_results/{output}\n"),
    )
    .unwrap();
    task
}

#[test]
fn planted_links_are_named_never_embedded_in_notebooks_or_read_by_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = victim(secret_dir.path(), "sk-planted-secret-7731");
    let task = tiny_task(dir.path(), "out.csv");
    let out = dir.path().join("out");
    let plant = format!(
        "import os, shutil\n\
         os.symlink('/proc/self/environ', 'pred_results/e.png')\n\
         os.symlink('{}', 'pred_results/s.png')\n\
         os.symlink('{}', 'pred_results/c.csv')\n\
         shutil.copy('data/points.csv', 'pred_results/out.csv')\nprint('planted')",
        secret.display(),
        secret.display()
    );
    let lines = [
        call("execute_python", json!({ "code": plant })),
        call("finish", json!({ "summary": "done" })),
        call("finish", json!({ "summary": "done" })),
    ];
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let o = solve_replay(
        &task,
        &replay,
        &out,
        &[],
        &[("GISCLAW_TEST_SECRET", "sk-planted-secret-7731")],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The progress lines name the planted figures too, never draw or size them.
    let progress = common::text(&o);
    for name in ["e.png", "s.png"] {
        assert!(
            progress.contains(&format!(
                "figure: pred_results/{name}: a link out of its folder, not read"
            )),
            "{name}: {progress}"
        );
    }
    let observation = first_observation(&out);
    for name in ["e.png", "s.png", "c.csv"] {
        assert!(
            observation.contains(&format!(
                "pred_results/{name}: a link out of its folder, not read"
            )),
            "{name}: {observation}"
        );
    }
    let mut everything = String::new();
    for entry in std::fs::read_dir(&out).unwrap().flatten() {
        if entry.path().is_file() {
            everything.push_str(&String::from_utf8_lossy(
                &std::fs::read(entry.path()).unwrap(),
            ));
        }
    }
    let notebook = common::gisclaw(
        &[
            "transcript",
            "to-ipynb",
            out.to_str().unwrap(),
            "--out",
            dir.path().join("t.ipynb").to_str().unwrap(),
        ],
        &[],
    );
    assert!(notebook.status.success(), "{}", common::text(&notebook));
    everything.push_str(&std::fs::read_to_string(dir.path().join("t.ipynb")).unwrap());
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode("sk-planted-secret-7731");
    for needle in ["sk-planted-secret-7731", &b64[..20], "GISCLAW_TEST_SECRET"] {
        assert!(
            !everything.contains(needle),
            "{needle} reached the run's records"
        );
    }
    assert!(
        std::fs::read_to_string(out.join("solution.ipynb"))
            .unwrap()
            .contains("a link out of its folder"),
        "the notebook names the refused figure"
    );
}

#[test]
fn a_fifo_output_never_hangs_the_checks_or_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let task = tiny_task(dir.path(), "result.csv");
    let out = dir.path().join("out");
    let lines = [
        call(
            "execute_python",
            json!({ "code": "import os\nos.mkfifo('pred_results/result.csv')\nprint('fifo')" }),
        ),
        call("finish", json!({ "summary": "done" })),
        call("finish", json!({ "summary": "done" })),
    ];
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    // A check that opened the FIFO would block here for ever; the named
    // refusal below is the proof that none did.
    let o = solve_replay(&task, &replay, &out, &[], &[]);
    assert!(
        o.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let observation = first_observation(&out);
    assert!(
        observation.contains("pred_results/result.csv: a FIFO, not read"),
        "{observation}"
    );
    assert!(out.join("run.json").is_file());
}

#[test]
fn the_card_reads_no_link_out_of_the_data_folder_and_no_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = victim(secret_dir.path(), "card-secret-5521");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("points.csv"), "id,value\n1,3.5\n").unwrap();
    std::os::unix::fs::symlink(&secret, data.join("creds.csv")).unwrap();
    std::os::unix::fs::symlink("/", data.join("root")).unwrap();
    std::os::unix::fs::symlink("points.csv", data.join("alias.csv")).unwrap();
    let fifo = std::ffi::CString::new(data.join("pipe.csv").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let out = common::gisclaw(&["card", data.to_str().unwrap()], &[]);
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("card-secret-5521"), "{text}");
    assert!(
        text.contains("creds.csv — a link to outside the data folder, not read"),
        "{text}"
    );
    assert!(
        text.contains("root — a link to outside the data folder, not read"),
        "{text}"
    );
    assert!(text.contains("pipe.csv — a FIFO, not read"), "{text}");
    assert!(
        text.contains("alias.csv"),
        "a link inside the folder is followed: {text}"
    );
    let inspect = common::gisclaw(&["card", data.to_str().unwrap(), "creds.csv"], &[]);
    let text = common::text(&inspect);
    assert!(!text.contains("card-secret-5521"), "{text}");
    assert!(
        text.contains("a link to outside the data folder, not read"),
        "{text}"
    );
}

#[test]
fn a_huge_header_is_never_allocated_by_the_checks() {
    let (mut s, dir) = common::session();
    let code = "import rasterio, numpy as np\n\
                with rasterio.open('pred_results/map.gif', 'w', driver='GTiff', width=200000, height=200000, count=4, dtype='uint8', tiled=True, sparse_ok=True) as ds:\n\
                \x20   ds.write(np.full((4, 256, 256), 7, 'uint8'), window=((0, 256), (0, 256)))\n\
                import struct, zlib\n\
                def chunk(kind, data):\n\
                \x20   return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))\n\
                png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 30000, 30000, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(bytes(1000))) + chunk(b'IEND', b'')\n\
                open('pred_results/big.png', 'wb').write(png)\nprint('written')";
    let out = run(&mut s, code);
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    let pred = dir.path().join("pred_results");
    let big = gisclaw::outputs::check(&pred.join("big.png"));
    assert!(
        big.describe()
            .contains("30000×30000 px, more than the 40 million pixels"),
        "{}",
        big.describe()
    );
    let map = gisclaw::outputs::check(&pred.join("map.gif"));
    assert!(
        map.describe()
            .contains("200000×200000 px, more than the 40 million pixels"),
        "{}",
        map.describe()
    );
    let mut checks = gisclaw::outputs::sanity::OutputChecks::new(None, "");
    let _ = checks.all(&pred);
    assert_eq!(run(&mut s, "print('alive')").result.stdout.trim(), "alive");
}

#[test]
fn gis_variables_reach_cells_only_by_name() {
    let work = common::workdir();
    let out = exec_in(
        work.path(),
        "env.py",
        "import os\nprint(sorted(k for k in os.environ if k.startswith(('GDAL_', 'OGR_', 'CPL_', 'PROJ_', 'PG'))))\n\
         print('password' in str(os.environ))\n",
        true,
        &[
            ("OGR_PG_DSN", "host=db user=gis password=hunter2"),
            ("GDAL_PG_CONNECTION", "password=hunter2"),
            ("CPL_VSIL_CURL_ALLOWED_EXTENSIONS", ".tif"),
            ("GDAL_CACHEMAX", "256"),
        ],
    );
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    // What the worker sets itself (its CA bundles) besides, never the host's.
    assert!(text.contains("'GDAL_CACHEMAX'"), "{text}");
    for withheld in ["OGR_PG_DSN", "GDAL_PG_CONNECTION", "CPL_VSIL_CURL"] {
        assert!(!text.contains(withheld), "{withheld}: {text}");
    }
    assert!(text.contains("False"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn an_archive_of_100000_members_is_described_from_its_first_members() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // Written by the sandbox's Python, as a cell (or a download) would.
    let (mut s, work) = common::session();
    let zip = work.path().join("pred_results/many.zip");
    let out = run(
        &mut s,
        "import zipfile\nwith zipfile.ZipFile('pred_results/many.zip', 'w') as z:\n\
         \x20   for i in range(100_000):\n\
         \x20       z.writestr(f'm/{i:06d}.txt', '')\nprint('zipped')",
    );
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    std::fs::copy(&zip, data.join("many.zip")).unwrap();
    let out = common::gisclaw(&["card", data.to_str().unwrap()], &[]);
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("zip archive of more than 2000 entries, the first 2000 looked at"),
        "{text}"
    );
}

#[test]
fn eval_scores_no_output_reached_through_a_link_out() {
    let dir = tempfile::tempdir().unwrap();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = victim(secret_dir.path(), "scored-secret");
    let gold = dir.path().join("gold");
    std::fs::create_dir_all(gold.join("pred_results")).unwrap();
    for name in ["x.csv", "y.csv", "z.csv"] {
        std::fs::copy(&secret, gold.join("pred_results").join(name)).unwrap();
    }
    let run = dir.path().join("run");
    let pred = run.join("pred_results");
    std::fs::create_dir_all(&pred).unwrap();
    std::os::unix::fs::symlink(&secret, pred.join("x.csv")).unwrap();
    let fifo = std::ffi::CString::new(pred.join("y.csv").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    use gisclaw::eval::metrics::output_score::score_output;
    let linked = score_output("pred_results/x.csv", &gold, &run);
    assert_eq!(linked.score, 0.0, "{linked:?}");
    assert_eq!(linked.note, "a link out of its folder, not read");
    let piped = score_output("pred_results/y.csv", &gold, &run);
    assert_eq!(piped.note, "a FIFO, not read");
    // The same table as a file of the run's own is scored in full (the
    // gold world-readable, as a gold run's outputs are to its reader).
    for side in [&gold.join("pred_results/z.csv"), &pred.join("z.csv")] {
        std::fs::copy(&secret, side).unwrap();
        std::fs::set_permissions(side, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let own = score_output("pred_results/z.csv", &gold, &run);
    assert!(own.score > 0.99, "{own:?}");
}

/// A number no honest file of these tests holds: every hostile file below
/// that GDAL followed would show it (as pixels, a field, a statistic).
const MARKER: u16 = 27331;

/// A loopback HTTP listener that counts the connections made to it.
struct Listener {
    port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Listener {
    fn start() -> Listener {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = socket.local_addr().unwrap().port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for stream in socket.incoming().flatten() {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(stream);
            }
        });
        Listener { port, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Files outside every folder under test, world-readable in a
/// world-searchable folder (so that only the reader's view keeps them
/// out), and one readable by root alone: each holds [`MARKER`].
fn marked_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let raw: Vec<u8> = (0..16).flat_map(|_| MARKER.to_le_bytes()).collect();
    std::fs::write(dir.path().join("raw.bin"), &raw).unwrap();
    std::fs::write(dir.path().join("root-only.bin"), &raw).unwrap();
    std::fs::set_permissions(
        dir.path().join("root-only.bin"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("secret.csv"),
        format!("x,y,secret\n1,2,{MARKER}\n3,4,{MARKER}\n"),
    )
    .unwrap();
    let tif = dir.path().join("secret.tif");
    let driver = gdal::DriverManager::get_driver_by_name("GTiff").unwrap();
    let ds = driver
        .create_with_band_type::<u16, _>(&tif, 4, 4, 1)
        .unwrap();
    let mut band = ds.rasterband(1).unwrap();
    let mut buffer = gdal::raster::Buffer::new((4, 4), vec![MARKER; 16]);
    band.write((0, 0), (4, 4), &mut buffer).unwrap();
    drop(ds);
    for name in ["raw.bin", "secret.csv", "secret.tif"] {
        std::fs::set_permissions(
            dir.path().join(name),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
    }
    dir
}

fn raster_vrt(band: &str) -> String {
    format!("<VRTDataset rasterXSize=\"4\" rasterYSize=\"4\">\n{band}\n</VRTDataset>\n")
}

fn raw_band(path: &str) -> String {
    raster_vrt(&format!(
        "<VRTRasterBand dataType=\"UInt16\" band=\"1\" subClass=\"VRTRawRasterBand\">\
         <SourceFilename relativeToVRT=\"0\">{path}</SourceFilename><ImageOffset>0</ImageOffset>\
         <PixelOffset>2</PixelOffset><LineOffset>8</LineOffset><ByteOrder>LSB</ByteOrder></VRTRasterBand>"
    ))
}

fn simple_source(path: &str, relative: bool) -> String {
    raster_vrt(&format!(
        "<VRTRasterBand dataType=\"UInt16\" band=\"1\"><SimpleSource>\
         <SourceFilename relativeToVRT=\"{}\">{path}</SourceFilename><SourceBand>1</SourceBand>\
         </SimpleSource></VRTRasterBand>",
        u8::from(relative)
    ))
}

fn ogr_vrt(path: &str) -> String {
    format!(
        "<OGRVRTDataSource><OGRVRTLayer name=\"secret\"><SrcDataSource>CSV:{path}</SrcDataSource>\
         <SrcLayer>secret</SrcLayer><GeometryType>wkbPoint</GeometryType>\
         <GeometryField encoding=\"PointFromColumns\" x=\"x\" y=\"y\"/></OGRVRTLayer></OGRVRTDataSource>\n"
    )
}

/// Every class of content indirection, as files named as outputs and
/// data are named: `(name, contents)`. `marked` holds the marked files;
/// `depth` is how many folders up from the planted file `/` is reached
/// by a relative path.
fn indirections(marked: &Path, port: u16, depth: usize) -> Vec<(String, String)> {
    let at = |name: &str| marked.join(name).to_str().unwrap().to_string();
    let up = "../".repeat(depth);
    let relative = format!("{up}{}", at("secret.tif").trim_start_matches('/'));
    vec![
        ("raw.tif".into(), raw_band(&at("raw.bin"))),
        ("rootonly.tif".into(), raw_band(&at("root-only.bin"))),
        ("simple.tif".into(), simple_source(&at("secret.tif"), false)),
        ("relative.tif".into(), simple_source(&relative, true)),
        ("plain.vrt".into(), simple_source(&at("secret.tif"), false)),
        ("layer.geojson".into(), ogr_vrt(&at("secret.csv"))),
        ("layer.gpkg".into(), ogr_vrt(&at("secret.csv"))),
        (
            "remote.tif".into(),
            simple_source(&format!("/vsicurl/http://127.0.0.1:{port}/a.tif"), false),
        ),
        (
            "remote.geojson".into(),
            format!("{{\"$ref\": \"/vsicurl/http://127.0.0.1:{port}/b.geojson\"}}"),
        ),
        ("stdin.tif".into(), simple_source("/vsistdin/", false)),
        ("stdinraw.tif".into(), raw_band("/vsistdin/")),
    ]
}

/// Standard input for a gisclaw that must never read it: [`MARKER`] bytes.
fn marked_stdin() -> Vec<u8> {
    (0..4096).flat_map(|_| MARKER.to_le_bytes()).collect()
}

/// Runs gisclaw with [`marked_stdin`] on its standard input.
fn gisclaw_fed(args: &[&str]) -> std::process::Output {
    use std::io::Write;
    let mut cmd = common::gisclaw_command(args, &[]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&marked_stdin());
    });
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    out
}

fn assert_unmarked(what: &str, text: &str) {
    assert!(
        !text.contains(&MARKER.to_string()),
        "{what} shows what a file's contents pointed at: {text}"
    );
}

#[test]
fn the_card_never_follows_a_files_contents_out_of_the_data_folder() {
    let marked = marked_files();
    let listener = Listener::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("points.csv"), "id,value\n1,3.5\n2,4.5\n").unwrap();
    // Read through /vsigzip/, which writes a `.properties` index beside it
    // unless told not to.
    let rows: String = (0..5000).map(|i| format!("{i},{}\n", i * 3)).collect();
    std::fs::write(data.join("zipped.csv"), format!("id,value\n{rows}")).unwrap();
    let gzip = std::process::Command::new("gzip")
        .arg(data.join("zipped.csv"))
        .status()
        .unwrap();
    assert!(gzip.success());
    let depth = data.components().count() - 1;
    let files = indirections(marked.path(), listener.port, depth);
    for (name, contents) in &files {
        std::fs::write(data.join(name), contents).unwrap();
    }
    let card = gisclaw_fed(&["card", data.to_str().unwrap()]);
    let text = common::text(&card);
    assert!(card.status.success(), "{text}");
    assert_unmarked("the card", &text);
    assert!(text.contains("data/points.csv"), "{text}");
    let json = gisclaw_fed(&["card", data.to_str().unwrap(), "--json"]);
    assert_unmarked("the card's facts", &common::text(&json));
    for (name, _) in &files {
        let one = gisclaw_fed(&["card", data.to_str().unwrap(), name]);
        assert_unmarked(name, &common::text(&one));
    }
    assert_eq!(listener.hits(), 0, "the card's reader reached the network");
    // Nothing written beside the data (GDAL's .aux.xml, .properties).
    let mut names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), files.len() + 2, "{names:?}");
    assert!(text.contains("zipped.csv.gz"), "{text}");
    // And the folder still reads.
    let again = common::gisclaw(&["card", data.to_str().unwrap(), "points.csv"], &[]);
    assert!(
        common::text(&again).contains("2 rows"),
        "{}",
        common::text(&again)
    );
}

#[test]
fn output_checks_and_scoring_never_follow_a_files_contents() {
    let marked = marked_files();
    let listener = Listener::start();
    let (mut s, work) = common::session();
    let pred = work.path().join("pred_results");
    let depth = pred.components().count() - 1;
    let files = indirections(marked.path(), listener.port, depth);
    // Written by a cell, as the model would write them.
    let code = format!(
        "import json\nfiles = json.loads({:?})\nfor name, text in files:\n    open('pred_results/' + name, 'w').write(text)\nprint(len(files))",
        serde_json::to_string(&files).unwrap()
    );
    let out = run(&mut s, &code);
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    let mut checks = gisclaw::outputs::sanity::OutputChecks::new(None, "");
    let lines = checks.after_cell(&pred, &names, &[]);
    assert_unmarked("the output checks", &lines.join("\n"));
    assert_unmarked("finish", &checks.all(&pred).join("\n"));
    for name in &names {
        let check = gisclaw::outputs::check(&pred.join(name));
        assert_unmarked(name, &check.describe());
        assert!(!check.is_content(), "{name}: {}", check.describe());
    }
    // Eval: the gold run's output is what the candidate's VRT names.
    let gold = tempfile::tempdir().unwrap();
    std::fs::create_dir(gold.path().join("pred_results")).unwrap();
    std::fs::copy(
        marked.path().join("secret.tif"),
        gold.path().join("pred_results/map.tif"),
    )
    .unwrap();
    let gold_map = gold.path().join("pred_results/map.tif");
    run(
        &mut s,
        &format!(
            "open('pred_results/map.tif', 'w').write({:?})",
            simple_source(gold_map.to_str().unwrap(), false)
        ),
    );
    let score = gisclaw::eval::metrics::output_score::score_output(
        "pred_results/map.tif",
        gold.path(),
        work.path(),
    );
    assert!(score.score < 0.5, "the candidate read the gold: {score:?}");
    assert_eq!(listener.hits(), 0, "a reader reached the network");
    assert_eq!(run(&mut s, "print('alive')").result.stdout.trim(), "alive");
}

#[test]
fn the_reader_holds_the_sandboxs_layers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.path().join("a.csv"), "id\n1\n").unwrap();
    let root = gisclaw::reader::Root::chosen(dir.path()).unwrap();
    let request = gisclaw::reader::Request::CardText {
        shown_as: "data/".into(),
        budget: 1000,
    };
    let (reply, _) =
        gisclaw::reader::read(&root, request, std::time::Duration::from_secs(60)).unwrap();
    let c = &reply.confinement;
    for (layer, status) in [
        ("namespaces", &c.namespaces),
        ("seccomp", &c.network),
        ("landlock", &c.filesystem),
        ("rlimits", &c.rlimits),
        ("no-new-privs", &c.no_new_privs),
        ("capabilities", &c.capabilities),
    ] {
        assert!(status.is_active(), "{layer}: {status:?}");
    }
    assert!(
        format!("{:?}", c.namespaces).contains("network"),
        "{:?}",
        c.namespaces
    );
    // A folder swapped for a link is refused, not followed.
    let swapped = dir.path().join("swapped");
    std::os::unix::fs::symlink("/etc", &swapped).unwrap();
    let refused = gisclaw::reader::Root::exact(&swapped)
        .err()
        .expect("a link is no folder");
    assert!(refused.to_string().contains("a link"), "{refused}");
}

/// Whether `text` holds a control character that would drive a terminal
/// (anything but newline and tab).
fn drives_the_terminal(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
}

#[test]
fn terminal_escapes_from_cells_data_and_models_are_shown_not_obeyed() {
    let clipboard = "\u{1b}]52;c;aGk=\u{7}";
    let fake_end = "\r\u{1b}[2Kgisclaw: finished";
    let title = "\u{1b}]0;pwned\u{7}";
    // A data folder whose file names carry escapes.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("points.csv"), "id,value\n1,3.5\n").unwrap();
    std::fs::write(data.join(format!("{clipboard}a.csv")), "id\n1\n").unwrap();
    std::fs::write(data.join(format!("b{fake_end}.csv")), "id\n2\n").unwrap();
    let card = common::gisclaw(&["card", data.to_str().unwrap()], &[]);
    let text = common::text(&card);
    assert!(card.status.success(), "{text}");
    assert!(!drives_the_terminal(&text), "the card: {text:?}");
    assert!(text.contains("\\x1b]52;c;aGk=\\x07a.csv"), "{text}");
    // A run: the model's words, a cell's output, error and figure names.
    let task = tiny_task(dir.path(), "out.csv");
    let out = dir.path().join("out");
    let plant = format!(
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n\
         plt.plot([1, 2, 3])\nplt.savefig('pred_results/' + {} + 'map.png')\nprint({})\nBAD = {}\nraise ValueError(BAD)",
        serde_json::to_string(title).unwrap(),
        serde_json::to_string(fake_end).unwrap(),
        serde_json::to_string(clipboard).unwrap()
    );
    let fix = "import shutil\ntry:\n    raise ValueError(BAD)\nexcept ValueError:\n    pass\n\
               shutil.copy('data/points.csv', 'pred_results/out.csv')\nprint('fixed')";
    let said =
        serde_json::json!({"role": "assistant", "content": format!("done{fake_end}{clipboard}")});
    let lines = [
        call("execute_python", json!({ "code": plant })),
        call("execute_python", json!({ "code": fix })),
        said.to_string(),
        call("finish", json!({ "summary": format!("ok{fake_end}") })),
    ];
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let memory = dir.path().join("memory.json");
    let envs = [("GISCLAW_ERROR_MEMORY", memory.to_str().unwrap())];
    // `--memory`: a replay learns into the Error Memory too.
    let o = solve_replay(&task, &replay, &out, &["--memory"], &envs);
    let text = common::text(&o);
    assert!(o.status.code().is_some(), "{text}");
    assert!(!drives_the_terminal(&text), "solve printed: {text:?}");
    assert!(
        text.contains("\\x1b]0;pwned"),
        "the figure is named: {text}"
    );
    // The Error Memory learnt the error with its escapes; shown, it obeys none.
    let shown = common::gisclaw(&["memory", "show"], &envs);
    let text = common::text(&shown);
    assert!(shown.status.success(), "{text}");
    assert!(!drives_the_terminal(&text), "memory show: {text:?}");
    assert!(
        text.contains("\\x1b]52;c;aGk="),
        "memory show names it: {text}"
    );
    // And the run still answers.
    assert!(out.join("run.json").is_file());
}

/// The names of `path`'s extended attributes.
fn xattr_names(path: &Path) -> Vec<String> {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let mut buf = vec![0u8; 4096];
    // SAFETY: c is NUL-terminated and buf valid for its length.
    let n = unsafe { libc::listxattr(c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    assert!(n >= 0, "{}", std::io::Error::last_os_error());
    buf.truncate(n as usize);
    buf.split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect()
}

#[test]
fn a_lent_folder_comes_back_without_the_cells_acls_attributes_or_mode() {
    let work = common::workdir();
    std::fs::set_permissions(work.path(), std::fs::Permissions::from_mode(0o750)).unwrap();
    std::fs::create_dir(work.path().join("pred_results")).unwrap();
    std::fs::set_permissions(
        work.path().join("pred_results"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // Owner, group, mode and attributes of the folder and its pred_results/.
    let state = || -> Vec<_> {
        [work.path().to_path_buf(), work.path().join("pred_results")]
            .iter()
            .map(|p| {
                let m = std::fs::metadata(p).unwrap();
                (m.uid(), m.gid(), m.mode() & 0o7777, xattr_names(p))
            })
            .collect()
    };
    let before = state();
    // What `setfacl -m u:SANDBOX:rwx -d -m u:SANDBOX:rwx` writes, by hand
    // (the sandbox's own user, `nobody` outside when gisclaw is root),
    // plus an attribute of the cell's own and a mode open to everyone.
    let out = exec_in(
        work.path(),
        "acl.py",
        "import os, struct\n\
         def acl(entries):\n\
         \x20   return struct.pack('<I', 2) + b''.join(struct.pack('<HHI', t, p, i) for t, p, i in entries)\n\
         grant = acl([(1, 7, 0xffffffff), (2, 7, os.getuid()), (4, 5, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 5, 0xffffffff)])\n\
         done = []\n\
         for folder in ['.', 'pred_results']:\n\
         \x20   for name in ['system.posix_acl_access', 'system.posix_acl_default']:\n\
         \x20       try:\n\
         \x20           os.setxattr(folder, name, grant)\n\
         \x20           done.append(name)\n\
         \x20       except OSError as e:\n\
         \x20           print('refused', name, e)\n\
         \x20   os.setxattr(folder, 'user.left_behind', b'1')\n\
         \x20   os.chmod(folder, 0o3777)\n\
         print('planted', len(done), sorted(os.listxattr('.')))\n",
        false,
        &[],
    );
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("planted 4"), "{text}");
    assert_eq!(state(), before, "the folder came back changed");
    // The folder still lends and works.
    let out = exec_in(
        work.path(),
        "again.py",
        "print('still', 6 * 7)\n",
        false,
        &[],
    );
    assert!(
        common::text(&out).contains("still 42"),
        "{}",
        common::text(&out)
    );
}

#[test]
fn a_data_folder_the_sandbox_cannot_enter_shows_nothing_on_the_card() {
    if !am_root() {
        eprintln!("not root: the sandbox is the user and enters the user's folders; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("open")).unwrap();
    std::fs::create_dir_all(data.join("closed")).unwrap();
    for folder in [data.clone(), data.join("open"), data.join("closed")] {
        std::fs::write(folder.join("rows.csv"), "id,secret\n1,reach-4242\n").unwrap();
        std::fs::set_permissions(
            folder.join("rows.csv"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
    }
    std::fs::set_permissions(data.join("open"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(data.join("closed"), std::fs::Permissions::from_mode(0o700)).unwrap();
    // The folder itself open: the closed sub-folder is named, its file not read.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let card = common::gisclaw(&["card", data.to_str().unwrap()], &[]);
    let text = common::text(&card);
    assert!(text.contains("data/open/rows.csv"), "{text}");
    assert!(!text.contains("data/closed/rows.csv —"), "{text}");
    assert!(
        text.contains("data/closed — a folder the sandbox's user cannot enter"),
        "{text}"
    );
    let one = common::gisclaw(&["card", data.to_str().unwrap(), "closed/rows.csv"], &[]);
    assert!(
        !common::text(&one).contains("reach-4242"),
        "{}",
        common::text(&one)
    );
    // The folder itself closed: nothing in it.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    for args in [vec![], vec!["--json"], vec!["rows.csv"]] {
        let mut all = vec!["card", data.to_str().unwrap()];
        all.extend(args);
        let card = common::gisclaw(&all, &[]);
        let text = common::text(&card);
        assert!(!text.contains("reach-4242"), "{text}");
        assert!(!text.contains("1 file(s)"), "{text}");
    }
    let text = common::text(&common::gisclaw(&["card", data.to_str().unwrap()], &[]));
    assert!(
        text.contains("a folder the sandbox's user cannot enter"),
        "{text}"
    );
}

#[test]
fn a_suites_ids_are_names_never_paths() {
    let dir = tempfile::tempdir().unwrap();
    // What a hostile suite's id would reach: a folder beside --out.
    let victim_dir = dir.path().join("x");
    std::fs::create_dir(&victim_dir).unwrap();
    std::fs::write(victim_dir.join("keep.txt"), "keep").unwrap();
    for (n, id) in ["../../x", "..", "a/b", "sp ace", "\u{1b}[2Kx"]
        .iter()
        .enumerate()
    {
        let suite = dir.path().join(format!("suite{n}"));
        let task_dir = suite.join("T01");
        std::fs::create_dir_all(task_dir.join("data")).unwrap();
        std::fs::write(task_dir.join("data/a.csv"), "id\n1\n").unwrap();
        std::fs::write(
            task_dir.join("gold.py"),
            "open('pred_results/n.txt', 'w').write('1')\n",
        )
        .unwrap();
        std::fs::write(
            task_dir.join("task.yaml"),
            format!(
                "id: {}\ntitle: t\ninstruction: i\ndata: data\ngold: gold.py\noutputs:\n  - pred_results/n.txt\n",
                serde_json::to_string(id).unwrap()
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("out{n}/eval"));
        let o = common::gisclaw(
            &[
                "eval",
                "--suite",
                suite.to_str().unwrap(),
                "--replay-gold",
                "--runs",
                "1",
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        );
        let text = common::text(&o);
        assert_eq!(o.status.code(), Some(2), "{id:?}: {text}");
        assert!(
            text.contains("task.yaml") && text.contains("id"),
            "{id:?}: the error names the file and field: {text}"
        );
        assert!(!drives_the_terminal(&text), "{text:?}");
        assert_eq!(text.trim().lines().count(), 1, "one line: {text}");
    }
    assert_eq!(
        std::fs::read_to_string(victim_dir.join("keep.txt")).unwrap(),
        "keep"
    );
    // A plain id runs as before.
    let ok = dir.path().join("suite0/T01/task.yaml");
    let text = std::fs::read_to_string(&ok).unwrap();
    std::fs::write(&ok, text.replace("id: \"../../x\"", "id: T01")).unwrap();
    let out = dir.path().join("out-ok");
    let o = common::gisclaw(
        &[
            "eval",
            "--suite",
            dir.path().join("suite0").to_str().unwrap(),
            "--replay-gold",
            "--runs",
            "1",
            "--arch",
            "single",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(out.join("runs/T01").is_dir());
}

/// A task whose one output is `pred_results/map.tif`, with a tiny data folder.
fn map_task(dir: &Path) -> std::path::PathBuf {
    tiny_task(dir, "map.tif")
}

#[test]
fn a_reproduction_that_points_at_the_runs_own_output_does_not_reproduce() {
    let dir = tempfile::tempdir().unwrap();
    let task = map_task(dir.path());
    let out = dir.path().join("out");
    // Random pixels: an honest reproduction cannot remake them. Run again
    // (in reproduce/), the cell writes a VRT naming the run's own output.
    let code = "import os, numpy as np, rasterio\n\
                here = os.getcwd()\n\
                if '/reproduce/' in here:\n\
                \x20   run = os.path.dirname(os.path.dirname(os.path.dirname(here)))\n\
                \x20   src = os.path.join(run, 'pred_results', 'map.tif')\n\
                \x20   vrt = f'<VRTDataset rasterXSize=\"8\" rasterYSize=\"8\"><VRTRasterBand dataType=\"Float64\" band=\"1\"><SimpleSource><SourceFilename relativeToVRT=\"0\">{src}</SourceFilename><SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>'\n\
                \x20   open('pred_results/map.tif', 'w').write(vrt)\n\
                else:\n\
                \x20   with rasterio.open('pred_results/map.tif', 'w', driver='GTiff', width=8, height=8, count=1, dtype='float64') as ds:\n\
                \x20       ds.write(np.random.rand(1, 8, 8))\n\
                print('written', here)";
    // Finished twice: a raster without a CRS is warned about once.
    let lines = [
        call("execute_python", json!({ "code": code })),
        call("finish", json!({ "summary": "done" })),
        call("finish", json!({ "summary": "done" })),
    ];
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let o = solve_replay(&task, &replay, &out, &[], &[]);
    let text = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let reproduced = &common::run_json(&out)["reproduced"];
    assert_eq!(
        reproduced["ok"], false,
        "the VRT was read as the run's own: {reproduced}"
    );
    assert!(
        reproduced["differed"][0]
            .as_str()
            .unwrap()
            .starts_with("pred_results/map.tif differs"),
        "{reproduced}"
    );
}

#[test]
fn a_reproductions_comparison_is_bounded_and_stops_on_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let task = tiny_task(dir.path(), "out.txt");
    let out = dir.path().join("out");
    // Two 512 MiB sparse texts (nothing on disk) and two texts of 1.6 MB
    // of distinct words, different in each run: read whole, they cost
    // gigabytes; compared word by word, ROUGE-L ran for minutes.
    let code = "import os, random\n\
                with open('pred_results/out.txt', 'w') as f:\n\
                \x20   f.truncate(512 << 20)\n\
                words = ' '.join(f'w{random.randrange(10**9)}' for _ in range(160_000))\n\
                open('pred_results/words.txt', 'w').write(words)\n\
                print('written')";
    let lines = [
        call("execute_python", json!({ "code": code })),
        call("finish", json!({ "summary": "done" })),
    ];
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let o = solve_replay(&task, &replay, &out, &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let reproduced = &common::run_json(&out)["reproduced"];
    assert_eq!(reproduced["outputs"], 2, "{reproduced}");
    let differed = reproduced["differed"].to_string();
    assert!(
        !differed.contains("out.txt"),
        "the sparse twins are the same: {reproduced}"
    );
    assert!(differed.contains("words.txt differs"), "{reproduced}");
    assert!(
        differed.contains("bag-of-words"),
        "the linear comparison: {reproduced}"
    );

    // SIGTERM while the reproduction runs: the run ends `interrupted`.
    let slow_dir = tempfile::tempdir().unwrap();
    let task = tiny_task(slow_dir.path(), "out.txt");
    let out = slow_dir.path().join("out");
    let code = "import os, time\n\
                open('pred_results/out.txt', 'w').write('x')\n\
                if '/reproduce/' in os.getcwd():\n\
                \x20   time.sleep(60)\n\
                print('done')";
    let lines = [
        call("execute_python", json!({ "code": code })),
        call("finish", json!({ "summary": "done" })),
    ];
    let replay = slow_dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut child = common::solve_replay_command(&task, &replay, &out, &[], &[])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !out.join("reproduce/work").is_dir() {
        assert!(started.elapsed().as_secs() < 60, "no reproduction started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill with the child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    let run = common::run_json(&out);
    assert_eq!(run["status"], "interrupted", "{run}");
}

#[test]
fn the_sessions_gdal_refuses_stdin_whatever_gisclaw_inherited() {
    let work = common::workdir();
    let out = exec_in(
        work.path(),
        "gdal.py",
        "import os, rasterio\n\
         print({k: os.environ.get(k) for k in ['CPL_ALLOW_VSISTDIN', 'GDAL_VRT_ENABLE_RAWRASTERBAND', 'GDAL_VRT_ENABLE_PYTHON', 'PROJ_NETWORK']})\n\
         try:\n\
         \x20   rasterio.open('/vsistdin/')\n\
         \x20   print('stdin opened')\n\
         except Exception as e:\n\
         \x20   print('stdin refused:', str(e)[:60])\n",
        true,
        &[
            // What a user's shell might say: overridden for every session.
            ("CPL_ALLOW_VSISTDIN", "YES"),
            ("GDAL_MEM_ENABLE_OPEN", "YES"),
        ],
    );
    let text = common::text(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("'CPL_ALLOW_VSISTDIN': 'NO'"), "{text}");
    assert!(
        text.contains("'GDAL_VRT_ENABLE_RAWRASTERBAND': 'NO'"),
        "{text}"
    );
    assert!(text.contains("'GDAL_VRT_ENABLE_PYTHON': 'NO'"), "{text}");
    assert!(text.contains("'PROJ_NETWORK': 'OFF'"), "{text}");
    assert!(text.contains("stdin refused"), "{text}");
}

#[test]
fn a_reader_past_its_time_is_stopped_and_the_next_one_answers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let rows: String = (0..200_000).map(|i| format!("{i},{}\n", i * 7)).collect();
    std::fs::write(dir.path().join("big.csv"), format!("id,value\n{rows}")).unwrap();
    let root = gisclaw::reader::Root::chosen(dir.path()).unwrap();
    let request = || gisclaw::reader::Request::CardText {
        shown_as: "data/".into(),
        budget: 1000,
    };
    let err = gisclaw::reader::read(&root, request(), std::time::Duration::from_millis(1))
        .expect_err("1 ms is too short for any card");
    assert!(
        matches!(err, gisclaw::reader::ReadError::Timeout(_)),
        "{err}"
    );
    // Killed with its namespace's processes: their pipes closed, and read()
    // came back (it waits on them otherwise).
    let (reply, _) = gisclaw::reader::read(&root, request(), std::time::Duration::from_secs(60))
        .expect("the next reader answers");
    assert!(
        reply.answer.as_str().unwrap().contains("big.csv"),
        "{}",
        reply.answer
    );
}

#[test]
fn entries_the_walk_refused_are_never_handed_to_the_libraries_check() {
    // FIFOs named like a VRT and a shapefile, and a VRT linking out: the
    // card's check in the sandbox must not open them (a FIFO would block
    // it until the cell's time limit), and the card is still checked.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("points.csv"), "id,value\n1,3.5\n").unwrap();
    for name in ["pipe.vrt", "pipe.shp"] {
        let fifo = std::ffi::CString::new(data.join(name).to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    }
    std::os::unix::fs::symlink("/etc/passwd", data.join("out.vrt")).unwrap();
    let data = data.canonicalize().unwrap();
    let card = gisclaw::card::library::in_throwaway_session(common::zygote(), &data, |session| {
        gisclaw::card::checked_card(&data, "data/", 4_000, session)
    })
    .unwrap();
    assert!(
        card.contains("- data/pipe.vrt — a FIFO, not read"),
        "{card}"
    );
    assert!(
        card.contains("- data/out.vrt — a link to outside the data folder"),
        "{card}"
    );
    assert!(card.contains("- data/points.csv — table"), "{card}");
    assert!(!card.contains("could not check"), "{card}");
    // The one-file entry: a FIFO handed to the check blocks it until the
    // cell's time limit, which then leaves it unchecked.
    let entry = gisclaw::card::library::in_throwaway_session(common::zygote(), &data, |session| {
        gisclaw::card::checked_inspect(&data, "data/", "pipe.vrt", session)
    })
    .unwrap()
    .unwrap()
    .text();
    assert!(entry.contains("a FIFO, not read"), "{entry}");
    assert!(!entry.contains("could not check"), "{entry}");
}
