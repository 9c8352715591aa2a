//! L3 output scores on small real files (GeoTIFF through GDAL, GeoJSON,
//! CSV, PNG), each against a hand-computed expectation.

use std::path::{Path, PathBuf};

use gdal::raster::Buffer;
use gdal::spatial_ref::SpatialRef;
use gdal::DriverManager;
use gisclaw::eval::metrics::output_score::score_files as score_output;

fn raster(path: &Path, w: usize, h: usize, epsg: u32, values: Vec<f64>) {
    let driver = DriverManager::get_driver_by_name("GTiff").unwrap();
    let mut ds = driver
        .create_with_band_type::<f64, _>(path, w, h, 1)
        .unwrap();
    ds.set_geo_transform(&[0.0, 10.0, 0.0, 100.0, 0.0, -10.0])
        .unwrap();
    ds.set_spatial_ref(&SpatialRef::from_epsg(epsg).unwrap())
        .unwrap();
    let mut band = ds.rasterband(1).unwrap();
    band.write((0, 0), (w, h), &mut Buffer::new((w, h), values))
        .unwrap();
}

fn png(path: &Path, pixel: impl Fn(usize, usize) -> u8) {
    let mem = DriverManager::get_driver_by_name("MEM").unwrap();
    let ds = mem.create_with_band_type::<u8, _>("", 64, 64, 1).unwrap();
    let data: Vec<u8> = (0..64 * 64).map(|i| pixel(i % 64, i / 64)).collect();
    ds.rasterband(1)
        .unwrap()
        .write((0, 0), (64, 64), &mut Buffer::new((64, 64), data))
        .unwrap();
    let driver = DriverManager::get_driver_by_name("PNG").unwrap();
    ds.create_copy(&driver, path, &Default::default()).unwrap();
}

fn file(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn rasters_combine_shape_crs_correlation_and_relative_error() {
    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("gold.tif");
    let values: Vec<f64> = (1..=16).map(f64::from).collect();
    raster(&gold, 4, 4, 3857, values.clone());
    // 10 % too large everywhere: ρ = 1 → f = 1; MRE = 0.1 → g = 0.5.
    let scaled = dir.path().join("scaled.tif");
    raster(
        &scaled,
        4,
        4,
        3857,
        values.iter().map(|v| v * 1.1).collect(),
    );
    let s = score_output("pred_results/x.tif", &gold, &scaled);
    assert_eq!(s.kind, "raster");
    assert!(close(s.score, 0.2 + 0.2 + 0.3 * 1.0 + 0.3 * 0.5), "{s:?}");
    assert!(
        close(s.parts["mre"], 0.1) && close(s.parts["rho"], 1.0),
        "{s:?}"
    );
    // The same values in another CRS lose the CRS part only.
    let other_crs = dir.path().join("crs.tif");
    raster(&other_crs, 4, 4, 32633, values.clone());
    assert!(close(score_output("x.tif", &gold, &other_crs).score, 0.8));
    // Another shape: no cells pair up, only the CRS part remains.
    let small = dir.path().join("small.tif");
    raster(&small, 3, 3, 3857, vec![1.0; 9]);
    assert!(close(score_output("x.tif", &gold, &small).score, 0.2));
    // Identical: 1.
    assert!(close(score_output("x.tif", &gold, &gold).score, 1.0));
}

const SQUARE_A: &str = r#"{"type":"Feature","properties":{"name":"a","area":1},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}"#;
const SQUARE_B: &str = r#"{"type":"Feature","properties":{"name":"b","area":1},"geometry":{"type":"Polygon","coordinates":[[[2,0],[3,0],[3,1],[2,1],[2,0]]]}}"#;
const SQUARE_A_POP: &str = r#"{"type":"Feature","properties":{"name":"a","pop":5},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}"#;

fn collection(features: &[&str]) -> String {
    format!(
        r#"{{"type":"FeatureCollection","features":[{}]}}"#,
        features.join(",")
    )
}

#[test]
fn vectors_average_count_crs_columns_and_area_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let gold = file(
        dir.path(),
        "gold.geojson",
        &collection(&[SQUARE_A, SQUARE_B]),
    );
    let half = file(dir.path(), "half.geojson", &collection(&[SQUARE_A_POP]));
    // count 1/2, CRS 1 (both WGS 84), columns {name} of {name, area, pop} = 1/3, IoU 1/2.
    let s = score_output("pred_results/x.geojson", &gold, &half);
    assert_eq!(s.kind, "vector");
    assert!(close(s.score, (0.5 + 1.0 + 1.0 / 3.0 + 0.5) / 4.0), "{s:?}");
    assert!(close(s.parts["geometry"], 0.5), "{s:?}");
    assert!(close(score_output("x.geojson", &gold, &gold).score, 1.0));
    // Points are buffered before the overlap: the same points overlap fully.
    let points = collection(&[
        r#"{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[0,0]}}"#,
        r#"{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[5,5]}}"#,
    ]);
    let p = file(dir.path(), "p.geojson", &points);
    let s = score_output("x.geojson", &p, &p);
    assert!(close(s.parts["geometry"], 1.0), "{s:?}");
    // Overlapping parts are dissolved before areas are taken: a repeated
    // point adds no area, so the overlap stays 1 while the count ratio drops.
    let point = |x: u32| {
        format!(
            r#"{{"type":"Feature","properties":{{}},"geometry":{{"type":"Point","coordinates":[{x},{x}]}}}}"#
        )
    };
    let repeated = file(
        dir.path(),
        "r.geojson",
        &collection(&[&point(0), &point(0), &point(5)]),
    );
    let s = score_output("x.geojson", &repeated, &p);
    assert!(
        close(s.parts["geometry"], 1.0) && close(s.parts["count"], 2.0 / 3.0),
        "{s:?}"
    );
}

#[test]
fn tables_pair_rows_by_an_id_column_and_average_three_parts() {
    let dir = tempfile::tempdir().unwrap();
    let gold = file(
        dir.path(),
        "gold.csv",
        "id,a,b\n1,10,x\n2,20,y\n3,35,z\n4,41,w\n",
    );
    // Rows reversed, `a` doubled (ρ = 1 once paired by id), `b` → `c`.
    let cand = file(
        dir.path(),
        "cand.csv",
        "id,a,c\n4,82,q\n3,70,q\n2,40,q\n1,20,q\n",
    );
    let s = score_output("pred_results/t.csv", &gold, &cand);
    assert_eq!(s.kind, "table");
    // columns {id, a} of {id, a, b, c} = 1/2; rows 4/4; mean ρ over id and a = 1.
    assert!(close(s.score, (0.5 + 1.0 + 1.0) / 3.0), "{s:?}");
    assert!(s.note.contains("paired by `id`"), "{s:?}");
    // Without the id the rows pair by position and `a` anti-correlates (ρ < 0 counts 0).
    let cand2 = file(dir.path(), "cand2.csv", "a\n82\n70\n40\n20\n");
    let s2 = score_output("t.csv", &gold, &cand2);
    assert!(close(s2.score, (1.0 / 3.0 + 1.0 + 0.0) / 3.0), "{s2:?}");
}

#[test]
fn one_row_tables_compare_values_by_relative_error() {
    let dir = tempfile::tempdir().unwrap();
    let gold = file(dir.path(), "gold.csv", "metric,value\nauc,0.8\n");
    assert!(close(score_output("t.csv", &gold, &gold).score, 1.0));
    // Half the value: relative error 1/2, agreement 1/2.
    let half = file(dir.path(), "half.csv", "metric,value\nauc,0.4\n");
    let s = score_output("t.csv", &gold, &half);
    assert!(close(s.score, (1.0 + 1.0 + 0.5) / 3.0), "{s:?}");
}

#[test]
fn images_blank_score_zero_and_otherwise_ssim_is_a_weak_signal() {
    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("gold.png");
    png(&gold, |x, y| ((x * 4 + y * 3) % 256) as u8);
    let blank = dir.path().join("blank.png");
    png(&blank, |_, _| 255);
    let s = score_output("pred_results/map.png", &gold, &blank);
    assert_eq!((s.score, s.parts["blank"]), (0.0, 1.0), "{s:?}");
    let same = score_output("pred_results/map.png", &gold, &gold);
    assert!(close(same.score, 1.0) && same.weak, "{same:?}");
}

#[test]
fn missing_outputs_score_zero_and_text_compares_json_then_words() {
    let dir = tempfile::tempdir().unwrap();
    let gold = file(dir.path(), "gold.json", r#"{"a": 1, "b": [1, 2]}"#);
    let same = file(dir.path(), "same.json", r#"{"b": [1, 2], "a": 1}"#);
    assert!(close(score_output("r.json", &gold, &same).score, 1.0));
    let missing = score_output("r.json", &gold, &dir.path().join("nope.json"));
    assert_eq!((missing.score, missing.note.as_str()), (0.0, "missing"));
    let g = file(dir.path(), "g.txt", "a b c d e");
    let c = file(dir.path(), "c.txt", "a x c e");
    // ROUGE-L over words: LCS 3, P 3/4, R 3/5.
    assert!(close(
        score_output("r.txt", &g, &c).score,
        2.0 * 0.75 * 0.6 / 1.35
    ));
}
