//! Static analysis of a cell against the live namespace (`Session::analyse`,
//! the worker's `gisclaw_analysis.py`): what it finds, that it finds nothing
//! in correct code, that it runs nothing of what it reads, and that a
//! failing cell's observation carries its findings.

use gisclaw::agent::tools::Toolbox;
use gisclaw::sandbox::{CellStatus, Finding, Session};

use crate::common;

/// A session with `gdf` (a GeoDataFrame with `POP_2020` and `name`) and a
/// `data/roads.csv` beside it.
fn session_with_frame() -> (Session, tempfile::TempDir) {
    let (mut s, dir) = common::session();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/roads.csv"), "id\n1\n").unwrap();
    let out = s
        .execute(
            "import geopandas as gpd\nfrom shapely.geometry import Point\n\
             gdf = gpd.GeoDataFrame({'POP_2020': [1, 2], 'name': ['a', 'b']}, \
             geometry=[Point(0, 0), Point(1, 1)], crs=4326)",
        )
        .unwrap();
    assert_eq!(out.status, CellStatus::Ok, "{out:?}");
    (s, dir)
}

fn findings(s: &mut Session, code: &str) -> Vec<Finding> {
    s.analyse(code).unwrap()
}

/// The one finding of `code`, checked for kind, certainty and words.
fn one(s: &mut Session, code: &str, kind: &str, certain: bool, words: &[&str]) {
    let found = findings(s, code);
    assert_eq!(found.len(), 1, "{code}: {found:?}");
    let f = &found[0];
    assert_eq!(
        (f.kind.as_str(), f.certain),
        (kind, certain),
        "{code}: {f:?}"
    );
    for w in words {
        assert!(
            f.message.contains(w),
            "{code}: `{w}` not in {:?}",
            f.message
        );
    }
}

#[test]
fn a_cell_is_checked_against_the_live_objects_it_names() {
    let (mut s, _dir) = session_with_frame();
    one(
        &mut s,
        "total = gdf['Pop2020'].sum()",
        "column",
        true,
        &["`gdf['Pop2020']`: no such column", "nearest: 'POP_2020'"],
    );
    one(
        &mut s,
        "g = gdf.to_crs(epgs=3857)",
        "keyword",
        true,
        &["`gdf.to_crs()` takes no keyword `epgs`", "'epsg'"],
    );
    one(
        &mut s,
        "x = gpd.read_fille('data/roads.csv')",
        "attribute",
        true,
        &[
            "module `geopandas` has no attribute `read_fille`",
            "'read_file'",
        ],
    );
    one(
        &mut s,
        "print(totl)",
        "name",
        true,
        &["`totl` is not defined"],
    );
    one(
        &mut s,
        "r = gpd.read_file('data/road.csv')",
        "path",
        true,
        &["`data/road.csv` does not exist", "'roads.csv'"],
    );
    one(
        &mut s,
        "import arcpy",
        "import",
        true,
        &["`arcpy` is not available", "geopandas"],
    );
    one(&mut s, "x = (1,", "syntax", true, &["never closed"]);
    // numpy computes some attributes (module `__getattr__`): likely, not certain.
    one(
        &mut s,
        "import numpy as np\nv = np.flot64(1)",
        "attribute",
        false,
        &["'float64'"],
    );
    // `buffer` passes other keywords on (**kwargs): a near miss of its own
    // `resolution` is likely a misspelling, not certain.
    one(
        &mut s,
        "b = gdf.buffer(10, resolutionn=4)",
        "keyword",
        false,
        &[
            "has no parameter `resolutionn`",
            "did you mean `resolution`",
        ],
    );
    let line = &findings(&mut s, "a = 1\nb = 2\nc = gdf['nope']")[0];
    assert_eq!(line.line, 3, "{line:?}");
}

#[test]
fn correct_idiomatic_cells_have_no_findings() {
    let (mut s, _dir) = session_with_frame();
    for code in [
        "g = gdf.to_crs(epsg=3857)\ng['area'] = g.geometry.area\nprint(g['area'].sum())",
        "gdf['density'] = gdf['POP_2020'] / 2\nsmall = gdf[gdf['density'] < 1]",
        "import pandas as pd\ndf = pd.read_csv('data/roads.csv', sep=',')\ndf['new'] = 1\nprint(df['new'])",
        "def f(a, *rest, k=1, **more):\n    return [x * k for x in rest] + [a]\nprint(f(1, 2, k=3))",
        "for i, row in gdf.iterrows():\n    print(i, row['name'])",
        "try:\n    import rasterio\nexcept ImportError as err:\n    print(err)",
        "path = f'data/roads_{2020}.csv'\nglob_pattern = 'data/*.tif'\nprint(path, glob_pattern)",
        "print(gdf.POP_2020.mean(), gdf.geometry.x.min(), len(gdf))",
        "class Box:\n    def __init__(self):\n        self.v = 1\nprint(Box().v)",
        "import os\nos.makedirs('pred_results', exist_ok=True)\nprint(os.listdir('data'))",
        "ax = gdf.plot(column='POP_2020', legend=True)",
    ] {
        let found = findings(&mut s, code);
        assert!(found.is_empty(), "{code}\n{found:?}");
        let out = s.execute(code).unwrap();
        assert_eq!(out.status, CellStatus::Ok, "{code}: {out:?}");
    }
}

#[test]
fn analysis_runs_nothing_of_what_it_reads() {
    let (mut s, dir) = common::session();
    // A property, a __getattr__ and a __dir__ that leave a trace when run.
    let out = s
        .execute(
            "import os\nclass Trap:\n    @property\n    def prop(self):\n        open('ran-property', 'w').close()\n        return 1\n\
             \n    def __getattr__(self, name):\n        open('ran-getattr', 'w').close()\n        raise AttributeError(name)\n\
             \n    def method(self, a):\n        open('ran-method', 'w').close()\n\
             trap = Trap()",
        )
        .unwrap();
    assert_eq!(out.status, CellStatus::Ok, "{out:?}");
    // The cell's own variable summary may probe `trap`; only what the
    // analysis does from here on counts.
    let _ = std::fs::remove_file(dir.path().join("ran-getattr"));
    for code in [
        "x = trap.prop",
        "y = trap.missing",
        "trap.method(b=1)",
        "open('ran-cell', 'w').close()",
        "import os; os.system('touch ran-system')",
    ] {
        let _ = findings(&mut s, code);
    }
    let f = findings(&mut s, "trap.method(b=1)");
    assert!(
        f.iter()
            .any(|f| f.kind == "keyword" && f.message.contains("`b`")),
        "{f:?}"
    );
    let trap_missing = findings(&mut s, "y = trap.missing");
    assert!(
        trap_missing.iter().all(|f| !f.certain),
        "a __getattr__ object gives no certain finding: {trap_missing:?}"
    );
    for trace in [
        "ran-property",
        "ran-getattr",
        "ran-method",
        "ran-cell",
        "ran-system",
    ] {
        assert!(
            !dir.path().join(trace).exists(),
            "the analysis ran code: {trace}"
        );
    }
    // The session goes on with its namespace.
    let out = s.execute("print(type(trap).__name__)").unwrap();
    assert!(out.result.stdout.contains("Trap"), "{out:?}");
}

#[test]
fn a_failing_cell_tells_the_model_what_the_analysis_found_and_a_passing_one_does_not() {
    let (mut s, dir) = session_with_frame();
    let mut toolbox = Toolbox {
        session: &mut s,
        out_dir: dir.path().to_path_buf(),
        data_dir: None,
        data_path: "data/".into(),
        outputs: Vec::new(),
        docs: None,
        checks: None,
        vision: false,
    };
    let failing = toolbox
        .call(
            "execute_python",
            &serde_json::json!({"code": "print(gdf['Pop2020'].sum())"}).to_string(),
        )
        .unwrap();
    assert!(failing.text.contains("KeyError"), "{}", failing.text);
    assert!(
        failing.text.contains(
            "[static analysis] line 1: `gdf['Pop2020']`: no such column; nearest: 'POP_2020'"
        ),
        "{}",
        failing.text
    );
    // A likely finding on a cell that runs is not shown: it never blocks.
    let passing = toolbox
        .call(
            "execute_python",
            &serde_json::json!({"code": "import numpy as np\nprint(np.float64(1))"}).to_string(),
        )
        .unwrap();
    assert!(
        !passing.text.contains("[static analysis]"),
        "{}",
        passing.text
    );
    // A refused import's error already names the alternative: the finding
    // that says the same is not repeated under it.
    let refused = toolbox
        .call(
            "execute_python",
            &serde_json::json!({"code": "from pykrige.ok import OrdinaryKriging"}).to_string(),
        )
        .unwrap();
    assert!(
        refused
            .text
            .contains("'pykrige' is not available in this sandbox")
            && refused.text.matches("scipy.interpolate").count() == 1
            && !refused.text.contains("[static analysis]"),
        "{}",
        refused.text
    );
}

#[test]
fn two_cells_differing_only_in_layout_have_one_shape() {
    let (mut s, _dir) = common::session();
    let a = s.shape("x = gdf.buffer(10)\nprint(x)").unwrap();
    let same = [
        "x = gdf.buffer(10)\nprint(x)\n",
        "# the buffer\nx = gdf.buffer( 10 )\n\nprint(x)  # show it",
        "x = (gdf.buffer(10))\nprint(x)",
    ];
    for code in same {
        assert_eq!(s.shape(code).unwrap(), a, "{code:?}");
    }
    assert!(a.is_some());
    assert_ne!(s.shape("x = gdf.buffer(20)\nprint(x)").unwrap(), a);
    assert_eq!(s.shape("x = 'a'").unwrap(), s.shape("x = \"a\"").unwrap());
    assert_eq!(
        s.shape("x = (1,").unwrap(),
        None,
        "a syntax error has no shape"
    );
    // The shape is read, not run: the session is as it was.
    let out = s.execute("print('still here')").unwrap();
    assert_eq!(out.status, CellStatus::Ok);
}
