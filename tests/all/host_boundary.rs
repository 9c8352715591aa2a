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
    let script = work.path().join("s.py");
    std::fs::write(
        &script,
        "try:\n    open('victim.csv').read()\n    print('read it')\nexcept OSError:\n    print('refused')\n\
         open('made.txt', 'w').write('x')\nprint('wrote')\n",
    )
    .unwrap();
    let out = common::gisclaw(
        &[
            "exec",
            script.to_str().unwrap(),
            "--workdir",
            work.path().to_str().unwrap(),
        ],
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
    let script = work.path().join("env.py");
    std::fs::write(
        &script,
        "import os\nprint(sorted(k for k in os.environ if k.startswith(('GDAL_', 'OGR_', 'CPL_', 'PROJ_', 'PG'))))\n\
         print('password' in str(os.environ))\n",
    )
    .unwrap();
    let runtime = work.path().join("runtime");
    let out = common::gisclaw(
        &[
            "exec",
            script.to_str().unwrap(),
            "--workdir",
            work.path().to_str().unwrap(),
            "--no-daemon",
        ],
        &[
            ("GISCLAW_RUNTIME_DIR", runtime.to_str().unwrap()),
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
    let gold = dir.path().join("gold.csv");
    std::fs::copy(&secret, &gold).unwrap();
    let pred = dir.path().join("pred_results");
    std::fs::create_dir(&pred).unwrap();
    std::os::unix::fs::symlink(&secret, pred.join("x.csv")).unwrap();
    let fifo = std::ffi::CString::new(pred.join("y.csv").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    use gisclaw::eval::output_score::score_output;
    let linked = score_output("pred_results/x.csv", &gold, &pred.join("x.csv"));
    assert_eq!(linked.score, 0.0, "{linked:?}");
    assert_eq!(linked.note, "a link out of its folder, not read");
    let piped = score_output("pred_results/y.csv", &gold, &pred.join("y.csv"));
    assert_eq!(piped.note, "a FIFO, not read");
    // The same table as a file of the run's own is scored in full.
    std::fs::copy(&secret, pred.join("z.csv")).unwrap();
    std::fs::set_permissions(pred.join("z.csv"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let own = score_output("pred_results/z.csv", &gold, &pred.join("z.csv"));
    assert!(own.score > 0.99, "{own:?}");
}
