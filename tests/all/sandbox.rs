//! The sandbox against a real worker, real CPython and the real GIS stack.

use crate::common;

use std::time::{Duration, Instant};

use gisclaw::observation;
use gisclaw::sandbox::{CellStatus, SandboxConfig, SandboxError, Session, Zygote};
use gisclaw_protocol::{ChildExit, LayerStatus, VariableChange};

fn run(session: &mut Session, code: &str) -> gisclaw::sandbox::CellOutcome {
    session
        .execute(code)
        .unwrap_or_else(|err| panic!("sandbox failed on {code:?}: {err}"))
}

#[test]
fn state_persists_across_cells_and_cwd_is_the_workdir() {
    let (mut s, dir) = common::session();
    assert_eq!(run(&mut s, "a = 41").status, CellStatus::Ok);
    let out = run(
        &mut s,
        "print(a + 1)\nimport os\nprint(os.getcwd())\nprint(os.path.isdir('pred_results'))",
    );
    let lines: Vec<&str> = out.result.stdout.lines().collect();
    assert_eq!(lines[0], "42");
    assert_eq!(
        std::path::Path::new(lines[1]),
        dir.path().canonicalize().unwrap()
    );
    assert_eq!(lines[2], "True");
}

#[test]
fn last_expression_is_displayed_like_a_notebook() {
    let (mut s, _dir) = common::session();
    let out = run(&mut s, "x = 6\nx * 7");
    assert_eq!(out.result.stdout.trim(), "42");
}

#[test]
fn numpy_scalars_and_type_only_objects_are_reported_compactly() {
    // A numpy scalar reads as its value (not `np.float64(…)`); plot handles
    // whose summary would only repeat their type share one line of names.
    let (mut s, _dir) = common::session();
    let out = run(
        &mut s,
        "x = np.float64(2.5)\nk = np.int64(7)\nfig, ax = plt.subplots()\nim = ax.imshow(np.eye(3))\nplt.close(fig)",
    );
    let obs = gisclaw::observation::render(&out);
    assert!(obs.contains("  x (float64, new): 2.5\n"), "{obs}");
    assert!(obs.contains("  k (int64, new): 7\n"), "{obs}");
    assert!(
        obs.contains("  fig (Figure, new): figure with 1 axes\n"),
        "{obs}"
    );
    assert!(obs.contains("  also new: im (AxesImage)\n"), "{obs}");
    assert!(
        !obs.contains("np.float64") && !obs.contains("object>"),
        "{obs}"
    );
    // A frame with the columns of one already shown names it instead of
    // repeating the list, in later cells too; a short list is repeated.
    let out = run(
        &mut s,
        "X = pd.DataFrame({c: [1.0, 2.0] for c in 'abcde'})\nX_train = X.iloc[:1]",
    );
    let obs = gisclaw::observation::render(&out);
    assert!(
        obs.contains("  X (DataFrame, new): 2 rows × 5 columns: [a:float64, b:float64"),
        "{obs}"
    );
    assert!(
        obs.contains("  X_train (DataFrame, new): 1 rows × 5 columns: as `X`\n"),
        "{obs}"
    );
    let out = run(&mut s, "X_test = X.iloc[1:]\nsmall = X[['a', 'b']]");
    let obs = gisclaw::observation::render(&out);
    assert!(
        obs.contains("  X_test (DataFrame, new): 1 rows × 5 columns: as `X`\n"),
        "{obs}"
    );
    assert!(
        obs.contains("2 rows × 2 columns: [a:float64, b:float64]"),
        "{obs}"
    );
}

#[test]
fn new_and_changed_variables_are_summarised() {
    let (mut s, _dir) = common::session();
    let out = run(
        &mut s,
        "from shapely.geometry import Point\n\
         gdf = gpd.GeoDataFrame({'pop': [1, 2, 3]}, geometry=[Point(0, 0), Point(1, 1), Point(2, 2)], crs='EPSG:32617')\n\
         arr = np.arange(12, dtype=float).reshape(3, 4)\n\
         arr[0, 0] = np.nan\n\
         df = pd.DataFrame({'a': [1.5, 2.5]})\n\
         mixed = gpd.GeoSeries([Point(0, 0), None, Point(0, 0).buffer(1), Point(1, 1).buffer(1)])\n\
         from_wkt = gpd.GeoSeries([Point(0, 0)], crs=gdf.crs.to_wkt())\n\
         n = 3",
    );
    let find = |name: &str| {
        out.result
            .variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("{name} not reported in {:?}", out.result.variables))
            .clone()
    };
    let gdf = find("gdf");
    assert_eq!(gdf.kind, "GeoDataFrame");
    assert_eq!(gdf.change, VariableChange::New);
    assert!(
        gdf.summary.contains("3 rows") && gdf.summary.contains("EPSG:32617"),
        "{}",
        gdf.summary
    );
    assert!(
        gdf.summary.contains("pop") && gdf.summary.contains("Point"),
        "{}",
        gdf.summary
    );
    let arr = find("arr");
    assert!(
        arr.summary.contains("(3, 4)") && arr.summary.contains("float64"),
        "{}",
        arr.summary
    );
    assert!(
        arr.summary.contains("min 1") && arr.summary.contains("max 11"),
        "{}",
        arr.summary
    );
    assert!(arr.summary.contains("NaN 8.3%"), "{}", arr.summary);
    assert!(
        find("df").summary.contains("2 rows × 1 columns"),
        "{}",
        find("df").summary
    );
    assert_eq!(find("n").summary, "3");
    // A CRS made from an EPSG code is named by it as given; one made from
    // WKT is identified.
    assert_eq!(find("from_wkt").summary, "1 geometries, EPSG:32617, Point");
    // Geometry types most common first; a missing geometry is no type.
    assert_eq!(
        find("mixed").summary,
        "4 geometries, no CRS, Polygon/Point",
        "{:?}",
        find("mixed")
    );
    assert!(
        out.result.variables.iter().all(|v| v.name != "Point"),
        "imported classes are not user variables"
    );

    let again = run(
        &mut s,
        "gdf['density'] = gdf['pop'] * 2\nn = 4\nunused = None",
    );
    let names: Vec<(&str, VariableChange)> = again
        .result
        .variables
        .iter()
        .map(|v| (v.name.as_str(), v.change))
        .collect();
    assert!(
        names.contains(&("gdf", VariableChange::Changed)),
        "{names:?}"
    );
    assert!(names.contains(&("n", VariableChange::Changed)), "{names:?}");
    assert!(
        names.contains(&("unused", VariableChange::New)),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|(n, _)| *n == "arr"),
        "untouched variables are not reported: {names:?}"
    );

    // A name first bound to a library's class, then to the user's own
    // value, is the user's variable from then on (libraries' names are
    // remembered by the object they are bound to, not by name).
    let rebound = run(&mut s, "Point = 'a label'");
    assert!(
        rebound
            .result
            .variables
            .iter()
            .any(|v| v.name == "Point" && v.change == VariableChange::New),
        "{:?}",
        rebound.result.variables
    );
}

#[test]
fn stdout_keeps_the_head_and_the_latest_lines() {
    let (mut s, _dir) = common::session();
    let out = run(&mut s, "for i in range(100000):\n    print(f'line {i}')");
    let limits = common::config().limits;
    let stdout = &out.result.stdout;
    assert!(stdout.starts_with("line 0\n"), "head kept");
    assert!(
        stdout.trim_end().ends_with("line 99999"),
        "latest line kept"
    );
    assert!(out.result.stdout_dropped_chars > 100_000);
    assert!(stdout.contains("characters dropped"));
    assert!(
        stdout.len() <= limits.stdout_head_chars + limits.stdout_tail_chars + 100,
        "{}",
        stdout.len()
    );
}

#[test]
fn a_hundred_megabytes_of_output_stays_small() {
    let (mut s, _dir) = common::session();
    let out = run(&mut s, "print('x' * 100_000_000)\nprint('done')");
    assert_eq!(out.status, CellStatus::Ok);
    assert!(
        out.result.stdout.len() < 10_000,
        "{}",
        out.result.stdout.len()
    );
    assert!(out.result.stdout.trim_end().ends_with("done"));
}

#[test]
fn errors_keep_user_frames_and_the_exception_line_but_drop_library_frames() {
    let (mut s, _dir) = common::session();
    let out = run(
        &mut s,
        "def load():\n    return gpd.read_file('no_such_file.shp')\n\nlayer = load()",
    );
    assert_eq!(out.status, CellStatus::Error);
    let err = out.result.error.expect("an error");
    assert!(
        err.traceback.contains("File \"<cell-1>\", line 4"),
        "{}",
        err.traceback
    );
    assert!(
        err.traceback.contains("File \"<cell-1>\", line 2, in load"),
        "{}",
        err.traceback
    );
    assert!(
        err.traceback.contains("library frame(s)"),
        "{}",
        err.traceback
    );
    assert!(
        !err.traceback.contains("site-packages"),
        "{}",
        err.traceback
    );
    let last = err.traceback.trim_end().lines().last().unwrap();
    assert!(
        last.contains("no_such_file.shp"),
        "exception line last: {last}"
    );
    assert!(
        !err.traceback.contains("gisclaw_runtime"),
        "{}",
        err.traceback
    );
}

#[test]
fn blocked_imports_are_refused_with_the_alternative_by_every_route() {
    let (mut s, _dir) = common::session();
    for code in [
        "import arcpy",
        "import importlib\nimportlib.import_module('arcpy')",
        "__import__('pykrige.ok')",
        "from skimage import filters",
        "try:\n    import osgeo\nexcept KeyError:\n    pass",
    ] {
        let out = run(&mut s, code);
        let err = out
            .result
            .error
            .unwrap_or_else(|| panic!("{code} was not refused"));
        assert_eq!(err.ename, "ModuleNotFoundError", "{code}");
        assert!(
            err.evalue.contains("package constraint"),
            "{code}: {}",
            err.evalue
        );
        assert!(
            err.evalue.contains(" use "),
            "alternative named for {code}: {}",
            err.evalue
        );
    }
    let out = run(
        &mut s,
        "import importlib\nimportlib.import_module('pykrige')",
    );
    assert!(out
        .result
        .error
        .unwrap()
        .evalue
        .contains("scipy.interpolate"));
    // Ordinary imports still work.
    assert_eq!(
        run(&mut s, "import scipy.interpolate as si").status,
        CellStatus::Ok
    );
    // A cell whose top level imports a blocked package is refused before
    // any of it runs (the worker would have run the lines above the import);
    // one that guards the import runs, and handles the refusal itself.
    let refused = run(
        &mut s,
        "half_done = True\nfrom pykrige.ok import OrdinaryKriging",
    );
    assert!(refused.refused, "{:?}", refused.result);
    assert!(refused
        .result
        .error
        .unwrap()
        .evalue
        .contains("'pykrige' is not available in this sandbox (package constraint)"));
    let guarded = run(
        &mut s,
        "try:\n    import pykrige\nexcept ImportError as e:\n    print('fallback:', 'package constraint' in str(e))\nprint('half_done' in globals())",
    );
    assert!(!guarded.refused);
    assert_eq!(guarded.status, CellStatus::Ok, "{:?}", guarded.result.error);
    assert_eq!(guarded.result.stdout, "fallback: True\nFalse\n");
}

#[test]
fn installed_packages_are_listed_with_versions() {
    let (mut s, _dir) = common::session();
    let packages = s.packages().unwrap();
    for name in ["geopandas", "rasterio", "scikit-learn", "libpysal"] {
        let p = packages.iter().find(|p| p.name.eq_ignore_ascii_case(name));
        assert!(
            p.is_some_and(|p| !p.version.is_empty()),
            "{name} missing from {packages:?}"
        );
    }
    assert!(!common::zygote().info().packages.is_empty());
}

#[test]
fn an_endless_loop_is_interrupted_at_the_cell_timeout_and_the_session_goes_on() {
    let config = SandboxConfig {
        cell_timeout: Duration::from_secs(2),
        ..common::config()
    };
    let (mut s, _dir) = common::session_with(config);
    run(&mut s, "kept = 'still here'");
    let pid = s.worker_id();
    let out = run(&mut s, "while True:\n    pass");
    assert!(
        matches!(out.status, CellStatus::TimedOut { killed: false, .. }),
        "{:?}",
        out.status
    );
    assert_eq!(out.result.error.as_ref().unwrap().ename, "TimeoutError");
    assert_eq!(s.worker_id(), pid, "interrupted, not killed");
    assert_eq!(
        run(&mut s, "print(kept)").result.stdout.trim(),
        "still here"
    );
}

#[test]
fn a_cell_that_ignores_interrupts_is_killed_and_the_namespace_rebuilt() {
    let config = SandboxConfig {
        cell_timeout: Duration::from_secs(1),
        interrupt_grace: Duration::from_millis(500),
        ..common::config()
    };
    let (mut s, _dir) = common::session_with(config);
    run(&mut s, "kept = [1, 2, 3]");
    let pid = s.worker_id();
    // A builtin sum over a huge range does not check for signals.
    let out = run(&mut s, "sum(range(10**13))");
    assert!(
        matches!(out.status, CellStatus::TimedOut { killed: true, .. }),
        "{:?}",
        out.status
    );
    let restore = out.restore.expect("namespace rebuilt");
    assert_eq!(restore.replayed, 1);
    assert!(restore.failed.is_empty());
    assert_ne!(s.worker_id(), pid, "a new worker");
    assert_eq!(run(&mut s, "print(sum(kept))").result.stdout.trim(), "6");
}

#[test]
fn a_segfault_is_reported_and_the_session_continues_with_its_variables() {
    let (mut s, _dir) = common::session();
    run(&mut s, "before = 'survives'\nimport ctypes");
    let out = run(&mut s, "ctypes.string_at(0)");
    match &out.status {
        CellStatus::Crashed {
            exit: Some(ChildExit::Signaled { name, .. }),
        } => assert_eq!(name, "SIGSEGV"),
        other => panic!("expected a SIGSEGV crash, got {other:?}"),
    }
    assert!(observation::render(&out).contains("killed by SIGSEGV"));
    assert_eq!(out.restore.as_ref().map(|r| r.replayed), Some(1));
    let next = run(&mut s, "print(before)");
    assert_eq!(next.result.stdout.trim(), "survives");
}

#[test]
fn a_memory_bomb_fails_inside_the_worker() {
    let (mut s, _dir) = common::session();
    run(&mut s, "small = 5");
    let out = run(&mut s, "huge = bytearray(50 * 10**9)");
    assert_eq!(out.status, CellStatus::Error, "{:?}", out.result);
    assert_eq!(out.result.error.unwrap().ename, "MemoryError");
    assert_eq!(run(&mut s, "print(small)").result.stdout.trim(), "5");
    let out = run(&mut s, "big = np.ones((50_000, 100_000))");
    assert_eq!(
        out.result.error.map(|e| e.ename).as_deref(),
        Some("MemoryError")
    );
}

#[test]
fn writes_outside_the_workdir_are_refused_where_landlock_is_available() {
    let (mut s, dir) = common::session();
    if !s.confinement().filesystem.is_active() {
        eprintln!(
            "skipped because unsupported: {:?}",
            s.confinement().filesystem
        );
        assert!(
            common::zygote().info().landlock_abi.is_none(),
            "the probe says Landlock exists"
        );
        return;
    }
    assert!(matches!(
        s.confinement().filesystem,
        LayerStatus::Enforced(_)
    ));
    let escape = dir.path().parent().unwrap().join("gisclaw-escape-test");
    // A path under /tmp that no one else uses: a fixed name such as /tmp/x may
    // already be a directory on the machine, which raises IsADirectoryError.
    let outside = format!("/tmp/gisclaw-escape-{}", std::process::id());
    let in_tmp = format!("open('{outside}', 'w').write('no')");
    for code in [
        in_tmp.as_str(),
        "open('../gisclaw-escape-test', 'w').write('no')",
    ] {
        // Refused, or (inside the session's namespace, whose /tmp is its
        // private tmp) written where only the session sees it.
        let out = run(&mut s, code);
        if s.confinement().namespaces.is_active() {
            continue;
        }
        let err = out
            .result
            .error
            .unwrap_or_else(|| panic!("{code} was allowed"));
        assert_eq!(err.ename, "PermissionError", "{code}");
    }
    assert!(!escape.exists());
    assert!(!std::path::Path::new(&outside).exists());
    let ok = run(
        &mut s,
        "open('pred_results/out.txt', 'w').write('yes')\n\
         import tempfile\n\
         with tempfile.NamedTemporaryFile('w', delete=False) as f:\n    f.write('tmp ok')\n\
         print(f.name)",
    );
    assert_eq!(ok.status, CellStatus::Ok, "{:?}", ok.result.error);
    assert!(dir.path().join("pred_results/out.txt").is_file());
    // The session's tmp (its /tmp inside a namespace) is gisclaw's private tmp dir.
    let name = std::path::Path::new(ok.result.stdout.trim())
        .file_name()
        .unwrap()
        .to_owned();
    assert!(
        s.tmpdir().join(name).is_file(),
        "{} not in {}",
        ok.result.stdout,
        s.tmpdir().display()
    );
    // Reading outside the work dir stays possible.
    assert_eq!(
        run(&mut s, "open('/etc/hostname').read()").status,
        CellStatus::Ok
    );
}

#[test]
fn network_sockets_are_refused_where_seccomp_is_available() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).close()"
    );
    let (mut s, _dir) = common::session();
    if !s.confinement().network.is_active() {
        eprintln!("skipped because unsupported: {:?}", s.confinement().network);
        assert!(
            !common::zygote().info().seccomp,
            "the probe says seccomp exists"
        );
        return;
    }
    let out = run(&mut s, &code);
    let err = out.result.error.expect("connection refused by confinement");
    assert_eq!(err.ename, "PermissionError", "{err:?}");
    // AF_UNIX stays available.
    assert_eq!(
        run(&mut s, "import socket\na, b = socket.socketpair()").status,
        CellStatus::Ok
    );
    // The same code connects when confinement is off: the refusal is ours.
    let (mut open, _dir2) = common::session_with(SandboxConfig {
        confine: false,
        ..common::config()
    });
    assert_eq!(run(&mut open, &code).status, CellStatus::Ok);
}

#[test]
fn plt_show_does_not_hang_and_saves_the_figure() {
    let (mut s, dir) = common::session();
    let out = run(&mut s, "plt.plot([0, 1], [1, 0])\nplt.show()");
    assert_eq!(out.status, CellStatus::Ok);
    assert_eq!(
        out.result.figures,
        vec!["pred_results/figure_1.png".to_string()]
    );
    assert!(dir.path().join("pred_results/figure_1.png").is_file());
    assert!(out.result.stderr.contains("plt.savefig"));
    // A figure the user saved is not saved again.
    let out = run(
        &mut s,
        "plt.plot([0, 1])\nplt.savefig('pred_results/mine.png')\nplt.show()",
    );
    assert!(out.result.figures.is_empty(), "{:?}", out.result.figures);
}

#[test]
fn two_sessions_in_parallel_do_not_share_state() {
    let z = common::zygote();
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let z = z.clone();
            std::thread::spawn(move || {
                let dir = common::workdir();
                let mut s = Session::open(&z, dir.path()).unwrap();
                run(&mut s, &format!("mine = {i}\nimport time\ntime.sleep(0.3)"));
                let out = run(&mut s, "print(mine)\nprint('other' in globals())");
                run(&mut s, "other = 1");
                (out.result.stdout, s.worker_id())
            })
        })
        .collect();
    let results: Vec<(String, u64)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results[0].0.lines().collect::<Vec<_>>(), ["0", "False"]);
    assert_eq!(results[1].0.lines().collect::<Vec<_>>(), ["1", "False"]);
    assert_ne!(results[0].1, results[1].1);
}

#[test]
fn cancel_interrupts_a_sleep_at_once_and_keeps_the_namespace() {
    let (mut s, _dir) = common::session();
    run(&mut s, "import time\nkeep = 'yes'");
    let canceller = s.canceller();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        canceller.cancel();
    });
    let start = Instant::now();
    let out = run(&mut s, "time.sleep(60)");
    t.join().unwrap();
    assert!(
        matches!(out.status, CellStatus::Cancelled { killed: false }),
        "{:?}",
        out.status
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(run(&mut s, "print(keep)").result.stdout.trim(), "yes");
}

#[test]
fn the_task_budget_ends_the_session() {
    let config = SandboxConfig {
        task_budget: Duration::from_secs(2),
        ..common::config()
    };
    let (mut s, _dir) = common::session_with(config);
    let out = run(&mut s, "import time\ntime.sleep(30)");
    assert!(
        matches!(out.status, CellStatus::TimedOut { .. }),
        "{:?}",
        out.status
    );
    match s.execute("print(1)") {
        Err(SandboxError::BudgetExhausted(_)) => {}
        other => panic!("expected the budget to be spent, got {other:?}"),
    }
}

#[test]
fn system_exit_does_not_end_the_session() {
    let (mut s, _dir) = common::session();
    run(&mut s, "v = 1");
    let out = run(&mut s, "import sys\nsys.exit(3)");
    assert_eq!(out.result.error.unwrap().ename, "SystemExit");
    assert_eq!(run(&mut s, "print(v)").result.stdout.trim(), "1");
}

#[test]
fn helpers_return_rasters_as_band_first_arrays() {
    let (mut s, _dir) = common::session();
    let out = run(
        &mut s,
        "from rasterio.transform import from_origin\n\
         save_raster('dem.tif', np.arange(20, dtype='float32').reshape(4, 5), crs='EPSG:32617', transform=from_origin(0, 40, 10, 10))\n\
         data, meta = load_raster('dem.tif')\n\
         print(data.shape, meta['crs'], meta['res'])",
    );
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    assert_eq!(
        out.result.stdout.trim(),
        "(1, 4, 5) EPSG:32617 (10.0, 10.0)"
    );
}

#[test]
fn the_grid_template_keeps_a_grid_within_its_cell_cap() {
    // GISclaw Table 11's grid-size template: a fine grid over a city is
    // coarsened to fit; a small one is kept as asked.
    let (mut s, _dir) = common::session();
    let out = run(
        &mut s,
        "g = grid_template((0, 0, 10000, 5000), 1)\n\
         print(g['coarsened'], g['width'] * g['height'] <= 1_000_000, g['width'] * g['height'] > 990_000)\n\
         k = grid_template((0, 0, 10000, 5000), 100)\n\
         print(k['coarsened'], k['width'], k['height'], k['xs'][0], k['ys'][0], k['transform'].a, k['transform'].f)",
    );
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    assert_eq!(
        out.result.stdout.trim(),
        "True True True\nFalse 100 50 50.0 4950.0 100.0 5000.0"
    );
    let bad = run(&mut s, "grid_template((0, 0, 0, 10), 1)");
    assert!(
        bad.result.error.unwrap().evalue.contains("minx < maxx"),
        "a degenerate box is refused"
    );
}

#[test]
fn auto_numeric_casts_numbers_read_as_text_but_not_codes() {
    // GISclaw Table 11's auto-cast: a GeoJSON's text properties holding
    // numbers come back numeric; codes with leading zeros, words and the
    // types a call asks for stay as they are; off restores the readers.
    let (mut s, _dir) = common::session();
    run(
        &mut s,
        "import json\n\
         fc = {'type': 'FeatureCollection', 'features': [\n\
           {'type': 'Feature', 'geometry': {'type': 'Point', 'coordinates': [0, 0]}, 'properties': {'rate': '12.5', 'fips': '01001', 'name': 'a'}},\n\
           {'type': 'Feature', 'geometry': {'type': 'Point', 'coordinates': [1, 1]}, 'properties': {'rate': '7', 'fips': '01003', 'name': 'b'}}]}\n\
         open('t.geojson', 'w').write(json.dumps(fc))\n\
         open('t.csv', 'w').write('x\\n3\\n4\\n')",
    );
    let out = run(
        &mut s,
        "print(gpd.read_file('t.geojson').rate.dtype)\n\
         print(sorted(auto_numeric()))\n\
         g = gpd.read_file('t.geojson')\n\
         print(g.rate.dtype, g.rate.sum(), g.fips.tolist(), g.name.tolist())\n\
         print(pd.read_csv('t.csv').x.dtype, pd.read_csv('t.csv', dtype=str).x.dtype)\n\
         auto_numeric(False)\n\
         print(gpd.read_file('t.geojson').rate.dtype)",
    );
    assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
    let lines: Vec<&str> = out.result.stdout.trim().lines().collect();
    // pandas 3 reads text as its `str` dtype.
    assert_eq!(lines[0], "str", "{lines:?}");
    assert_eq!(
        lines[1],
        "['geopandas.read_file', 'pandas.read_csv', 'pandas.read_excel', 'pandas.read_table']"
    );
    assert_eq!(lines[2], "float64 19.5 ['01001', '01003'] ['a', 'b']");
    assert_eq!(lines[3], "int64 str");
    assert_eq!(lines[4], "str");
}

#[test]
fn a_missing_venv_is_one_clear_line_naming_the_fix() {
    let config = SandboxConfig {
        venv: "/nonexistent/gisclaw-venv".into(),
        ..SandboxConfig::default()
    };
    let err = Zygote::start(config).err().expect("must fail").to_string();
    assert!(
        err.contains("/nonexistent/gisclaw-venv") && err.contains("make setup"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn a_broken_site_packages_names_the_failing_library() {
    // A venv whose numpy is unimportable: the zygote still starts, and the
    // failure is reported with the fix.
    let base = SandboxConfig::default().venv;
    let tmp = common::workdir();
    let venv = tmp.path().join("venv");
    let py = base.join("bin/python");
    let status = std::process::Command::new(&py)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(status.success());
    let site = std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages");
    std::fs::write(
        site.join("numpy.py"),
        "raise ImportError('numpy is broken here')\n",
    )
    .unwrap();
    let z = Zygote::start(SandboxConfig {
        venv,
        ..SandboxConfig::default()
    })
    .expect("a zygote starts even with a broken stack");
    let failure = z
        .info()
        .import_failures
        .iter()
        .find(|f| f.module == "numpy")
        .expect("numpy failure reported");
    assert!(
        failure.error.contains("numpy is broken here"),
        "{failure:?}"
    );
}

#[test]
fn a_snapshot_copies_the_live_namespace_and_then_goes_its_own_way() {
    let (mut s, dir) = common::session();
    run(&mut s, "trail = ['start']\nimport time");
    let mut copy = s.snapshot().expect("snapshot");
    assert_ne!(copy.worker_id(), s.worker_id());
    assert_eq!(
        run(&mut copy, "trail.append('copy')\nprint(trail)")
            .result
            .stdout
            .trim(),
        "['start', 'copy']"
    );
    assert_eq!(
        run(&mut s, "print(trail)").result.stdout.trim(),
        "['start']"
    );
    // The copy writes to the same work dir, confined like the original.
    run(
        &mut copy,
        "open('pred_results/from_copy.txt', 'w').write('x')",
    );
    assert!(dir.path().join("pred_results/from_copy.txt").is_file());
    // The copy outlives the original …
    drop(s);
    assert_eq!(
        run(&mut copy, "print(len(trail))").result.stdout.trim(),
        "2"
    );
    // … and a crash in the copy rebuilds the copy's own history.
    let out = run(&mut copy, "import ctypes\nctypes.string_at(0)");
    assert!(
        matches!(out.status, CellStatus::Crashed { .. }),
        "{:?}",
        out.status
    );
    assert_eq!(
        run(&mut copy, "print(trail)").result.stdout.trim(),
        "['start', 'copy']"
    );
}

#[test]
fn process_pools_run_inside_the_confined_worker() {
    // scikit-learn's n_jobs=-1 and esda's G_Local default ask joblib for a
    // process pool, which the confined worker cannot start; the runtime runs
    // them in-process instead of failing with PermissionError.
    let (mut s, _dir) = common::session();
    let out = s
        .execute(
            "from sklearn.ensemble import RandomForestClassifier\n\
             m = RandomForestClassifier(n_estimators=8, n_jobs=-1, random_state=0).fit(np.eye(6), [0, 1, 0, 1, 0, 1])\n\
             from esda.getisord import G_Local\nfrom libpysal.weights import lat2W\n\
             g = G_Local(np.arange(16.0), lat2W(4, 4), permutations=49, seed=1)\n\
             print(len(m.estimators_), len(g.p_sim))",
        )
        .unwrap();
    assert_eq!(
        out.status,
        gisclaw::sandbox::CellStatus::Ok,
        "{:?}",
        out.result
    );
    assert!(out.result.stdout.contains("8 16"), "{}", out.result.stdout);
}

#[test]
fn a_failed_cells_statements_before_the_raise_are_kept_and_solution_py_reproduces_them() {
    let (mut s, dir) = common::session();
    // The shape of the run: names defined and an output written,
    // then the last line raises (a GEOS error on real data, here a
    // ValueError); a later cell uses the names.
    let failed = run(
        &mut s,
        "import json\n\
         reach = {'name': 'Nairobi', 'km': 12.5}\n\
         with open('pred_results/reach.json', 'w') as f:\n    json.dump(reach, f)\n\
         cities = [reach['name']]\n\
         raise ValueError('TopologyException on the last line')\n\
         never = 1\n",
    );
    assert_eq!(failed.status, CellStatus::Error);
    let kept = failed
        .result
        .ran_before_error
        .clone()
        .expect("the statements that ran");
    assert!(kept.contains("cities = [reach['name']]"), "{kept}");
    assert!(!kept.contains("raise") && !kept.contains("never"), "{kept}");
    assert_eq!(
        run(&mut s, "print(cities[0], reach['km'])").status,
        CellStatus::Ok
    );
    // A cell that raises in its first statement keeps nothing.
    let first = run(&mut s, "1 / 0\nx = 2\n");
    assert!(first.result.ran_before_error.is_none(), "{first:?}");
    let journal: Vec<&str> = s.journal().collect();
    assert_eq!(journal.len(), 2, "{journal:?}");
    assert!(
        journal[0].starts_with("# cell 1 raised ValueError after these statements"),
        "{journal:?}"
    );
    // solution.py, run on its own in a fresh folder, remakes the output and
    // defines the names the later cell uses.
    let script = gisclaw::agent::solution::consolidate("t", s.journal());
    let fresh = tempfile::tempdir().unwrap();
    std::fs::create_dir(fresh.path().join("pred_results")).unwrap();
    std::fs::write(fresh.path().join("solution.py"), &script).unwrap();
    let printed = common::venv_python([fresh.path().join("solution.py")]);
    assert_eq!(printed.trim(), "Nairobi 12.5", "{script}");
    assert_eq!(
        std::fs::read_to_string(fresh.path().join("pred_results/reach.json")).unwrap(),
        std::fs::read_to_string(dir.path().join("pred_results/reach.json")).unwrap()
    );
}

/// What a sink was given, in order.
type Received = std::sync::Arc<std::sync::Mutex<Vec<(gisclaw::sandbox::OutputStream, String)>>>;

/// A sink that keeps what it is given, and creates `go` in `dir` once it
/// has seen `waiting` (a running cell waits for that file: it can only
/// appear if the output came while the cell ran).
fn watching_sink(dir: &std::path::Path) -> (gisclaw::sandbox::OutputSink, Received) {
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = std::sync::Arc::clone(&got);
    let go = dir.join("go");
    let sink: gisclaw::sandbox::OutputSink = std::sync::Arc::new(move |stream, text: &str| {
        let mut got = kept.lock().unwrap();
        got.push((stream, text.to_string()));
        let seen: String = got.iter().map(|(_, t)| t.as_str()).collect();
        if seen.contains("waiting") && !go.exists() {
            std::fs::write(&go, "").unwrap();
        }
    });
    (sink, got)
}

#[test]
fn what_a_cell_prints_reaches_the_front_end_while_it_runs() {
    use gisclaw::sandbox::OutputStream;
    let (mut s, dir) = common::session();
    let (sink, got) = watching_sink(dir.path());
    s.set_output_sink(Some(sink));
    let out = run(
        &mut s,
        "import os, sys, time\nprint('waiting')\nsys.stderr.write('to stderr\\n')\n\
         for _ in range(1200):\n    if os.path.exists('go'):\n        break\n    time.sleep(0.05)\n\
         print('went' if os.path.exists('go') else 'gave up')",
    );
    assert_eq!(out.status, CellStatus::Ok, "{out:?}");
    assert!(
        out.result.stdout.contains("waiting\nwent"),
        "the cell saw the file the sink made: {:?}",
        out.result.stdout
    );
    // The cell's result is as before: its whole output.
    assert!(out.result.stderr.contains("to stderr"));
    let seen = got.lock().unwrap().clone();
    let text = |which: OutputStream| -> String {
        seen.iter()
            .filter(|(s, _)| *s == which)
            .map(|(_, t)| t.as_str())
            .collect()
    };
    assert_eq!(text(OutputStream::Stdout), "waiting\nwent\n");
    assert_eq!(text(OutputStream::Stderr), "to stderr\n");
    // A snapshot has no live view; the session's own cells still do.
    let mut branch = s.snapshot().unwrap();
    assert_eq!(
        branch.execute("print('branch')").unwrap().status,
        CellStatus::Ok
    );
    assert!(branch.output_sink().is_none());
    let before = got.lock().unwrap().len();
    run(&mut s, "print('again')");
    assert!(got.lock().unwrap().len() > before);
}

#[test]
fn a_flood_of_output_and_a_thread_printing_after_its_cell_leave_the_session_working() {
    let (mut s, dir) = common::session();
    let (sink, got) = watching_sink(dir.path());
    s.set_output_sink(Some(sink));
    let out = run(
        &mut s,
        "import sys, threading, time\nfor i in range(200000):\n    print('line', i)\n\
         def late():\n    for i in range(100):\n        print('late', i)\n        sys.stderr.write('late err\\n')\n        time.sleep(0.005)\n\
         threading.Thread(target=late, daemon=True).start()",
    );
    assert_eq!(out.status, CellStatus::Ok, "{out:?}");
    let sent: usize = got.lock().unwrap().iter().map(|(_, t)| t.len()).sum();
    assert!(sent < 300 * 1024, "live output is capped: {sent} bytes");
    assert!(
        got.lock()
            .unwrap()
            .iter()
            .any(|(_, t)| t.contains("live output stops after 256 KiB")),
        "the cap is said"
    );
    // Queries and cells right after, while the thread still prints.
    for _ in 0..5 {
        assert!(s.variables().unwrap().iter().any(|v| v.name == "late"));
        assert!(s.analyse("y = 1").unwrap().is_empty());
        let next = run(&mut s, "print('next')");
        assert_eq!(next.status, CellStatus::Ok, "{next:?}");
        assert!(next.result.stdout.contains("next"), "{next:?}");
    }
}
