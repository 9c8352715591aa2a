//! The formats analysts receive, made by the libraries themselves in a real
//! sandbox session (geopandas, pyarrow, rasterio, zipfile/tarfile): GeoParquet
//! and plain Parquet read natively by the card and written and read in the
//! sandbox; archives described member by member and read in place by the
//! path the card shows; coordinate and geometry columns of tables found with
//! their plausible CRS; a CSV that is not UTF-8 given the encoding that
//! reads it, and every CSV the `pd.read_csv` call that reads it as the card
//! describes it (separator, decimal comma, codes with leading zeros); a big CSV's row count and a big GeoJSON's feature count
//! estimated, not counted; a series of files (tiles, dates, one table per
//! station) described once, with what its members share; a File
//! Geodatabase described and listed as one dataset; a wide table's columns
//! written compactly; lines above a CSV's header and rows above a sheet's
//! header skipped; a categorical raster's classes named; thousands separators.

use std::io::Write;

use crate::common;

/// Runs `code` in `session` and checks it printed `done`.
fn make(session: &mut gisclaw::sandbox::Session, code: &str) -> String {
    let outcome = session.execute(code).unwrap();
    assert!(
        outcome.result.stdout.contains("done"),
        "{:?}\n{}",
        outcome.status,
        outcome.result.stderr
    );
    outcome.result.stdout
}

/// The `≈N` count of a card entry.
fn estimate_in(entry: &str) -> f64 {
    entry
        .split('≈')
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no estimate in:\n{entry}"))
}

fn assert_has(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
}

#[test]
fn geoparquet_is_written_and_read_in_the_sandbox_and_described_from_its_metadata() {
    let (mut session, dir) = common::session();
    let out = make(
        &mut session,
        r#"
import os
os.makedirs("data")
import geopandas as gpd, pandas as pd, shapely
towns = gpd.GeoDataFrame(
    {"name": ["Zürich", "Genève", "Ærøskøbing", "Kraków"], "pop": [421878, 203856, 950, 800653]},
    geometry=[shapely.Point(8.54, 47.37), shapely.Point(6.14, 46.2), shapely.Point(10.41, 54.89), shapely.Point(19.94, 50.06)],
    crs="EPSG:4326")
towns.to_parquet("data/towns.parquet")
towns.to_crs(3035).to_parquet("data/towns_laea.parquet", compression="zstd", write_covering_bbox=True)
towns.set_crs(None, allow_override=True).to_parquet("data/no_crs.parquet")
towns.to_parquet("data/towns_arrow.parquet", geometry_encoding="geoarrow")
pd.DataFrame({"site": ["a", "b"], "lat": [47.1, 46.9], "lon": [8.2, 7.4]}).to_parquet("data/sites.parquet")
back = gpd.read_parquet("data/towns.parquet")
print(back.crs.to_epsg(), back.name.tolist(), round(back.total_bounds[2], 2), "done")
"#,
    );
    assert!(
        out.contains("4326 ['Zürich', 'Genève', 'Ærøskøbing', 'Kraków'] 19.94"),
        "{out}"
    );
    let data = dir.path().join("data");
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    assert_has(
        &card,
        &[
            "- data/towns.parquet — GeoParquet 1.1.0, 4 rows in 1 row group(s)",
            "SNAPPY (read from its metadata)",
            "geometry `geometry`: Point, EPSG:4326, WKB, bbox [6.14, 46.2, 19.94, 54.89]",
            "columns: name (String), pop (Int64), geometry (Binary)",
            "row: name=\"Zürich\", pop=421878, geometry=POINT (8.54 47.37)",
            "read: gpd.read_parquet('data/towns.parquet')",
            // zstd-compressed, another CRS, a bbox covering (not in sample rows).
            "- data/towns_laea.parquet — GeoParquet 1.1.0",
            "ZSTD",
            "Point, EPSG:3035, WKB",
            "row: name=\"Genève\"",
            "no CRS (null in the metadata: unknown)",
            // GeoArrow's native encoding.
            "- data/towns_arrow.parquet — GeoParquet 1.1.0",
            "geometry `geometry`: Point, EPSG:4326, point",
            // Plain Parquet: a table, its coordinates found from statistics.
            "- data/sites.parquet — Parquet, 2 rows",
            "coordinates: `lon`, `lat` — longitude/latitude in degrees (lon 7.4…8.2, lat 46.9…47.1)",
            "read: pd.read_parquet('data/sites.parquet')",
        ],
    );
    assert!(
        !card.contains("bbox={xmin"),
        "covering columns are not sample values:\n{card}"
    );
    // As data (`gisclaw card --json`): the table as one layer.
    let towns = gisclaw::card::inspect_facts(&data, "data/", "towns.parquet").unwrap();
    let layer = &towns.layers[0];
    assert_eq!(layer.features, Some(4));
    let columns: Vec<&str> = layer.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(columns, ["name", "pop", "geometry"]);
    assert_eq!(layer.crs.as_ref().and_then(|c| c.epsg), Some(4326));
    assert_eq!(layer.extent, Some([6.14, 46.2, 19.94, 54.89]));
    assert_eq!(
        towns.read_call.as_deref(),
        Some("gpd.read_parquet('data/towns.parquet')")
    );
    let unknown = gisclaw::card::inspect_facts(&data, "data/", "no_crs.parquet").unwrap();
    assert!(unknown.layers[0].crs.is_none());
    // Its sample rows show the geometries as WKT, as WKB ones are.
    let arrow = card
        .split("\n- ")
        .find(|e| e.starts_with("data/towns_arrow"))
        .unwrap();
    assert!(
        arrow.contains("row: name=\"Zürich\", pop=421878, geometry=POINT (8.54 47.37)"),
        "{arrow}"
    );
    // A file that is not Parquet gets one clear line naming it.
    std::fs::write(data.join("broken.parquet"), b"PAR1 not really").unwrap();
    let err = gisclaw::card::inspect_file(&data, "data/", "data/broken.parquet")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("data/broken.parquet: "), "{err}");
    // The session still works after the card read its files.
    let after = make(&mut session, "print(len(gpd.read_parquet('data/towns_laea.parquet', bbox=(4.0e6, 2.5e6, 4.3e6, 2.8e6))), 'done')");
    assert!(after.starts_with('2'), "{after}");
}

/// Three zones tiling a 200 km square in EPSG:3035, as `zones` (Python).
const ZONES: &str = r#"
import geopandas as gpd, pandas as pd, shapely
zones = gpd.GeoDataFrame(
    {"name": ["north", "south", "east"], "value": [1.5, 2.0, 3.25]},
    geometry=[shapely.box(4.0e6, 2.6e6, 4.1e6, 2.7e6), shapely.box(4.0e6, 2.5e6, 4.1e6, 2.6e6), shapely.box(4.1e6, 2.5e6, 4.2e6, 2.7e6)],
    crs="EPSG:3035")
"#;

#[test]
fn parquet_outputs_are_scored_against_the_gold_as_vectors_or_tables() {
    use gisclaw::eval::metrics::output_score::score_files as score_output;
    let (mut session, dir) = common::session();
    make(
        &mut session,
        &[
            ZONES,
            r#"
zones.to_parquet("gold.parquet")
zones.to_file("same.gpkg")
zones.to_crs(4326).to_parquet("lonlat.parquet")
shifted = zones.copy()
shifted["geometry"] = zones.translate(5.0e4, 0)
shifted.to_parquet("shifted.parquet")
zones.set_crs(None, allow_override=True).to_parquet("no_crs.parquet")
zones.to_parquet("geoarrow.parquet", geometry_encoding="geoarrow")
# Each GeoArrow nesting: points, lines, multipolygons (with a hole).
ring = [(0, 0), (10, 0), (10, 10), (0, 10)]
shapes = {
    "points": [shapely.Point(1.5, 2.5), shapely.Point(3, 4)],
    "lines": [shapely.LineString([(0, 0), (5, 5), (9, 1)]), shapely.LineString([(1, 9), (8, 8)])],
    "multipolygons": [shapely.MultiPolygon([shapely.Polygon(ring, [[(2, 2), (4, 2), (4, 4)]]), shapely.box(20, 0, 25, 5)]), shapely.MultiPolygon([shapely.box(0, 20, 5, 25)])],
}
for kind, geoms in shapes.items():
    layer = gpd.GeoDataFrame({"n": range(len(geoms))}, geometry=geoms, crs="EPSG:32617")
    layer.to_parquet(f"{kind}_wkb.parquet")
    layer.to_parquet(f"{kind}_arrow.parquet", geometry_encoding="geoarrow")
table = pd.DataFrame({"site": ["a", "b", "c"], "lat": [47.1, 46.9, 46.5], "lon": [8.2, 7.4, 7.0]})
table.to_parquet("gold_table.parquet")
table[["site", "lat"]].to_parquet("fewer_columns.parquet")
# The same sites in another order, with latitudes that disagree.
table.assign(lat=[46.0, 47.5, 47.0]).iloc[::-1].to_parquet("other_values.parquet")
print("done")
"#,
        ]
        .concat(),
    );
    let at = |name: &str| dir.path().join(name);
    let declared = "pred_results/zones.parquet";
    let score = |candidate: &str| score_output(declared, &at("gold.parquet"), &at(candidate));

    let same = score("gold.parquet");
    assert_eq!((same.kind.name(), same.score), ("vector", 1.0), "{same:?}");
    // The same features in another format: every part agrees.
    let gpkg = score("same.gpkg");
    assert!(gpkg.score > 0.999, "{gpkg:?}");
    // Another CRS: the CRS part is lost, the geometry still overlaps once
    // brought into the gold's.
    let lonlat = score("lonlat.parquet");
    assert_eq!(lonlat.parts["crs"], 0.0, "{lonlat:?}");
    assert!(lonlat.parts["geometry"] > 0.99, "{lonlat:?}");
    // The zones tile a 200 km square; shifted 50 km east, it overlaps the
    // gold's by 150 × 200 km of a 250 × 200 km union (IoU 0.6).
    let shifted = score("shifted.parquet");
    assert!(
        (shifted.parts["geometry"] - 0.6).abs() < 0.01,
        "{shifted:?}"
    );
    assert_eq!(shifted.parts["columns"], 1.0, "{shifted:?}");
    // A null CRS is unknown, not the gold's.
    assert_eq!(score("no_crs.parquet").parts["crs"], 0.0);
    // GeoArrow's encodings read as WKB's do: the same features score 1.
    assert_eq!(score("geoarrow.parquet").score, 1.0);
    for kind in ["points", "lines", "multipolygons"] {
        let arrow = score_output(
            declared,
            &at(&format!("{kind}_wkb.parquet")),
            &at(&format!("{kind}_arrow.parquet")),
        );
        // (GEOS's overlay of two buffered copies leaves ~1e-14.)
        assert!(arrow.score > 0.999_999, "{kind}: {arrow:?}");
    }
    // Against other features the geometry part drops (not all read as empty).
    let other = score_output(
        declared,
        &at("lines_wkb.parquet"),
        &at("multipolygons_arrow.parquet"),
    );
    assert!(other.parts["geometry"] < 0.5, "{other:?}");
    // A plain Parquet gold is a table, compared as a CSV is: columns,
    // rows, and the shared numeric columns' values, rows paired by key.
    let table = score_output(
        "pred_results/sites.parquet",
        &at("gold_table.parquet"),
        &at("fewer_columns.parquet"),
    );
    assert_eq!(table.kind, "table", "{table:?}");
    assert_eq!(table.parts["rows"], 1.0, "{table:?}");
    assert!(
        (table.parts["columns"] - 2.0 / 3.0).abs() < 1e-9,
        "{table:?}"
    );
    assert_eq!(table.parts["rho"], 1.0, "{table:?}");
    assert!(table.note.starts_with("rows paired by `site`"), "{table:?}");
    let other_values = score_output(
        "pred_results/sites.parquet",
        &at("gold_table.parquet"),
        &at("other_values.parquet"),
    );
    // Paired by site despite the order: `lon` agrees (1), `lat` does not (0).
    assert!(
        (other_values.parts["rho"] - 0.5).abs() < 1e-9,
        "{other_values:?}"
    );
    // Not Parquet at all: one line saying so.
    std::fs::write(at("broken.parquet"), b"PAR1 not really").unwrap();
    let broken = score("broken.parquet");
    assert_eq!(broken.score, 0.0);
    assert!(
        broken.note.starts_with("not a readable Parquet file"),
        "{broken:?}"
    );
}

#[test]
fn geoparquet_inputs_and_outputs_get_the_output_checks_of_other_vectors() {
    use gisclaw::outputs::sanity::OutputChecks;
    let (mut session, dir) = common::session();
    make(
        &mut session,
        &[
            ZONES,
            r#"
import os
os.makedirs("data"); os.makedirs("pred_results", exist_ok=True)
zones.to_parquet("data/zones.parquet")
zones.to_parquet("pred_results/same.parquet")
zones.to_crs(32633).to_parquet("pred_results/utm.parquet")
holes = zones.copy()
holes.loc[0, "geometry"] = None
holes.loc[1, "geometry"] = shapely.Polygon()
holes.to_parquet("pred_results/holes.parquet")
holes.to_parquet("pred_results/holes_arrow.parquet", geometry_encoding="geoarrow")
far = zones.copy()
far["geometry"] = zones.translate(0, 3.0e6)
far.to_parquet("pred_results/far.parquet")
x, y = 4.0e6, 2.5e6
bowtie = shapely.Polygon([(x, y), (x + 1000, y + 1000), (x + 1000, y), (x, y + 1000)])
gpd.GeoDataFrame({"v": [1]}, geometry=[bowtie], crs="EPSG:3035").to_parquet("pred_results/bowtie.parquet")
print("done")
"#,
        ]
        .concat(),
    );
    // The input's CRS and extent come from its footer.
    let mut checks = OutputChecks::new(Some(&dir.path().join("data")), "Summarise the zones.");
    assert_eq!(checks.reference.crs, ["EPSG:3035"]);
    let pred = dir.path().join("pred_results");
    let names: Vec<String> = ["same", "utm", "holes", "holes_arrow", "far", "bowtie"]
        .iter()
        .map(|n| format!("{n}.parquet"))
        .collect();
    let lines = checks.after_cell(&pred, &names, &[]).join("\n");
    for needle in [
        "pred_results/utm.parquet: CRS EPSG:32633 differs from every input (EPSG:3035)",
        "pred_results/holes.parquet: 2 of 3 geometries are empty or missing",
        "pred_results/holes_arrow.parquet: 2 of 3 geometries are empty or missing",
        "pred_results/far.parquet: its extent",
        "pred_results/bowtie.parquet: 1 of 1 geometries are invalid",
    ] {
        assert!(lines.contains(needle), "missing `{needle}` in:\n{lines}");
    }
    assert!(!lines.contains("same.parquet"), "{lines}");
}

#[test]
fn archive_members_are_described_and_read_in_place_by_the_path_shown() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os, zipfile, tarfile, gzip, shutil
import numpy as np, geopandas as gpd, shapely, rasterio
from rasterio.transform import from_origin
os.makedirs("data"); os.makedirs("parts")
towns = gpd.GeoDataFrame({"name": ["Zürich", "Kraków"]},
    geometry=[shapely.Point(8.54, 47.37), shapely.Point(19.94, 50.06)], crs="EPSG:4326")
towns.to_file("parts/towns.shp")
with zipfile.ZipFile("data/towns_shp.zip", "w") as z:
    for f in sorted(os.listdir("parts")):
        z.write(f"parts/{f}", f)
    z.writestr("stations.csv", "station,lat,lon\nA,47.1,8.2\nB,46.9,7.4\n")
    z.writestr("notes/readme.txt", "hello")
    z.writestr("kreise.csv", "GEOID;rate\n01001;0,5\n01003;12,25\n")
with rasterio.open("parts/dem.tif", "w", driver="GTiff", height=10, width=12, count=1, dtype="float32",
                   crs="EPSG:32632", transform=from_origin(400000, 5200000, 30, 30)) as d:
    d.write(np.arange(120, dtype="float32").reshape(10, 12), 1)
with tarfile.open("data/bundle.tar.gz", "w:gz") as t:
    t.add("parts/dem.tif", "rasters/dem.tif")
with gzip.open("data/counts.csv.gz", "wt") as g:
    g.write("zone,count\nA,3\nB,4\n")
shutil.rmtree("parts")
print("done")
"#,
    );
    let data = dir.path().join("data");
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    assert_has(
        &card,
        &[
            "- data/towns_shp.zip — zip archive, 8 file(s)",
            "    read: pd.read_csv(zipfile.ZipFile('data/towns_shp.zip').open('kreise.csv'), sep=';', decimal=',', dtype={'GEOID': str})\n",
            "no need to unpack",
            "- /vsizip/data/towns_shp.zip/towns.shp — vector (ESRI Shapefile)",
            "layer `towns`: Point, EPSG:4326, 2 features",
            "row: name=\"Zürich\"",
            "- /vsizip/data/towns_shp.zip/stations.csv — table (CSV)",
            "coordinates: `lon`, `lat` — longitude/latitude in degrees",
            "pandas: pd.read_csv(zipfile.ZipFile('data/towns_shp.zip').open('stations.csv'))",
            "other members: notes/readme.txt (5 B)",
            "- data/bundle.tar.gz — tar archive, 1 file(s)",
            "- /vsitar/data/bundle.tar.gz/rasters/dem.tif — raster (GTiff), 12×10 px, 1 band(s), EPSG:32632",
            "min 0 max 119",
            "- data/counts.csv.gz — gzip-compressed counts.csv",
            "/vsigzip/data/counts.csv.gz — table (CSV)",
            "pandas: pd.read_csv('data/counts.csv.gz')",
        ],
    );
    assert!(!card.contains("GDAL cannot read"), "{card}");
    // inspect_data on a member, by either spelling; a wrong member is named.
    for name in [
        "/vsizip/data/towns_shp.zip/towns.shp",
        "data/towns_shp.zip/towns.shp",
    ] {
        let one = gisclaw::card::inspect_file(&data, "data/", name).unwrap();
        assert!(one.contains("Point, EPSG:4326, 2 features"), "{one}");
    }
    let err = gisclaw::card::inspect_file(&data, "data/", "data/towns_shp.zip/nope.shp")
        .unwrap_err()
        .to_string();
    assert_eq!(err, "/vsizip/data/towns_shp.zip/nope.shp: no such file");
    assert!(gisclaw::card::inspect_file(&data, "data/", "data/towns_shp.zip/../../x").is_err());
    // The paths the card shows are the ones that read the members in the sandbox.
    let out = make(
        &mut session,
        r#"
import pandas as pd, zipfile
a = gpd.read_file('/vsizip/data/towns_shp.zip/towns.shp')
with rasterio.open('/vsitar/data/bundle.tar.gz/rasters/dem.tif') as r:
    shape = r.shape
s = pd.read_csv(zipfile.ZipFile('data/towns_shp.zip').open('stations.csv'))
c = pd.read_csv('data/counts.csv.gz')
k = pd.read_csv(zipfile.ZipFile('data/towns_shp.zip').open('kreise.csv'), sep=';', decimal=',', dtype={'GEOID': str})
print(a.name.tolist(), shape, len(s), int(c['count'].sum()), list(k['GEOID']), k['rate'].sum(), "done")
"#,
    );
    assert!(
        out.contains("['Zürich', 'Kraków'] (10, 12) 2 7 ['01001', '01003'] 12.75 done"),
        "{out}"
    );
    // A member that needs arguments gets the call with them, not the plain hint too.
    assert!(
        !card.contains(
            "pandas: pd.read_csv(zipfile.ZipFile('data/towns_shp.zip').open('kreise.csv'))"
        ),
        "{card}"
    );
}

#[test]
fn tables_say_which_columns_are_coordinates_or_geometries() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import pandas as pd, shapely
os.makedirs("data")
pd.DataFrame({"site": ["a", "b", "c"], "Latitude": [47.1, 46.9, 48.0], "Longitude": [8.2, 7.4, 9.9]}).to_csv("data/sites.csv", index=False)
pd.DataFrame({"well": ["w1", "w2"], "easting": [401234.5, 455000.0], "northing": [5600100.0, 5650000.5]}).to_csv("data/wells.csv", index=False)
pd.DataFrame({"parcel": ["p1", "p2"], "wkt": ["POLYGON ((0 0, 1 0, 1 1, 0 0))", "POLYGON ((1 1, 2 1, 2 2, 1 1))"]}).to_csv("data/parcels.csv", index=False)
pd.DataFrame({"k": ["x"], "geom_hex": [shapely.to_wkb(shapely.Point(1, 2), hex=True)]}).to_csv("data/hex.csv", index=False)
pd.DataFrame({"zone": ["A"], "pop": [1200], "rate": [0.5]}).to_excel("data/plain.xlsx", index=False)
with pd.ExcelWriter("data/book.xlsx") as book:
    pd.DataFrame({"note": ["read me"]}).to_excel(book, sheet_name="Readme", index=False)
    pd.DataFrame({"zone": ["A", "B"], "pop": [1200, 800]}).to_excel(book, sheet_name="Counts", index=False)
# Shapefiles without their .prj: one in UTM metres, one in degrees.
gpd.GeoDataFrame({"v": [1, 2]}, geometry=gpd.points_from_xy([401234.5, 455000.0], [5600100.0, 5650000.5])).to_file("data/wells_noprj.shp")
gpd.GeoDataFrame({"v": [1]}, geometry=gpd.points_from_xy([8.2], [47.1])).to_file("data/sites_noprj.shp")
print("done")
"#,
    );
    let data = dir.path().join("data");
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    assert_has(
        &card,
        &[
            "coordinates: `Longitude`, `Latitude` — longitude/latitude in degrees (Longitude 7.4…9.9, Latitude 46.9…48): EPSG:4326 is the likely CRS; points: gpd.points_from_xy(df['Longitude'], df['Latitude'], crs='EPSG:4326')",
            "coordinates: `easting`, `northing` — projected units, not degrees",
            "the range fits a UTM zone",
            "geometry: `wkt` holds WKT (POLYGON)",
            "geometry: `geom_hex` holds hex WKB",
            "  read: pd.read_excel('data/book.xlsx', sheet_name='Counts') for a sheet other than the first (`Readme`, read without sheet_name)\n",
            "layer `wells_noprj`: Point, no CRS, 2 features\n  CRS: none in the file; the coordinates (x 401234.5…455000, y 5600100…5650000.5) are projected units, not degrees; the range fits a UTM zone",
            "layer `sites_noprj`: Point, no CRS, 1 features\n  CRS: none in the file, units unknown; the coordinates (x 8.2…8.2, y 47.1…47.1) are small enough to be degrees, but nothing in the file says they are: take the CRS from the task or metadata and set it (gdf = gdf.set_crs(…)) before any reprojection, distance or area",
        ],
    );
    assert_eq!(card.matches("CRS: none in the file").count(), 2, "{card}");
    let plain = gisclaw::card::inspect_file(&data, "data/", "data/plain.xlsx").unwrap();
    assert!(
        !plain.contains("coordinates:") && !plain.contains("geometry:"),
        "{plain}"
    );
    // The hints run as written.
    let out = make(
        &mut session,
        r#"
df = pd.read_csv('data/sites.csv')
pts = gpd.points_from_xy(df['Longitude'], df['Latitude'], crs='EPSG:4326')
w = gpd.GeoSeries.from_wkt(pd.read_csv('data/parcels.csv')['wkt'])
h = gpd.GeoSeries.from_wkb(pd.read_csv('data/hex.csv')['geom_hex'])
counts = pd.read_excel('data/book.xlsx', sheet_name='Counts')
print(len(pts), w.area.sum(), h.iloc[0].x, counts['pop'].sum(), "done")
"#,
    );
    assert!(out.contains("3 1.0 1.0 2000 done"), "{out}");
    assert!(!plain.contains("sheet_name"), "{plain}");
}

#[test]
fn a_csv_that_is_not_utf8_gets_the_encoding_that_reads_it() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import pandas as pd
os.makedirs("data")
pd.DataFrame({"city": ["Zürich", "Genève", "Köln"], "temp_c": [21.5, 23.0, 19.5]}).to_csv("data/cities.csv", index=False, encoding="cp1252")
pd.DataFrame({"city": ["Zürich"], "temp_c": [21.5]}).to_csv("data/utf8.csv", index=False)
# Tables as statistical offices still publish them, in their legacy encodings.
tables = {
    "goroda": ("cp1251", {"город": ["Москва", "Санкт-Петербург", "Новосибирск", "Екатеринбург"], "население": [12655050, 5384342, 1620162, 1544376]}),
    "miasta": ("cp1250", {"miasto": ["Łódź", "Kraków", "Gdańsk", "Wrocław", "Poznań"], "ludność": [672185, 779966, 470907, 672929, 541316]}),
    "chengshi": ("gb18030", {"城市": ["北京市", "上海市", "广州市", "深圳市"], "人口": [21893095, 24870895, 18676605, 17560061], "省份": ["北京", "上海", "广东省", "广东省"]}),
    "toshi": ("cp932", {"都市": ["東京都区部", "横浜市", "大阪市", "名古屋市"], "人口": [9733276, 3777491, 2752412, 2332176], "都道府県": ["東京都", "神奈川県", "大阪府", "愛知県"]}),
    "dosi": ("cp949", {"도시": ["서울특별시", "부산광역시", "인천광역시", "대구광역시"], "인구": [9586195, 3349016, 2948375, 2385412], "지역": ["수도권", "영남", "수도권", "영남"]}),
}
for name, (codec, columns) in tables.items():
    pd.DataFrame(columns).to_csv(f"data/{name}.csv", index=False, encoding=codec)
refused = 0
for name in ["cities", *tables]:
    try:
        pd.read_csv(f"data/{name}.csv")
    except UnicodeDecodeError:
        refused += 1
print(f"pandas refuses {refused}: done")
"#,
    );
    let data = dir.path().join("data");
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    let call = "pd.read_csv('data/cities.csv', encoding='cp1252')";
    assert_has(
        &card,
        &[&format!(
            "text: not UTF-8 (byte 0xFC on line 2); it reads as windows-1252 (Western European): \"Zürich\"\n  read: {call}\n"
        )],
    );
    assert_eq!(card.matches("text: ").count(), 6, "{card}");
    assert_eq!(card.matches("read: ").count(), 6, "{card}");
    // The sample rows are decoded as the call reads them.
    assert_has(
        &card,
        &["row: city=\"Zürich\", temp_c=21.5", "row: city=\"Genève\""],
    );
    // Each legacy table is named with the codec that reads it, and its
    // column names and sample values are shown decoded.
    let legacy = [
        (
            "goroda",
            "windows-1251 (Cyrillic): \"город\"",
            "cp1251",
            "columns: город (String), население (Integer)",
            "row: город=\"Москва\", население=12655050",
        ),
        (
            "miasta",
            "windows-1250 (Central European): \"ludność\"",
            "cp1250",
            "columns: miasto (String), ludność (Integer)",
            "row: miasto=\"Łódź\", ludność=672185",
        ),
        (
            "chengshi",
            "GBK (Chinese (simplified)): \"城市\"",
            "gb18030",
            "columns: 城市 (String), 人口 (Integer), 省份 (String)",
            "row: 城市=\"北京市\", 人口=21893095, 省份=\"北京\"",
        ),
        (
            "toshi",
            "Shift_JIS (Japanese): \"都市\"",
            "cp932",
            "columns: 都市 (String), 人口 (Integer), 都道府県 (String)",
            "row: 都市=\"東京都区部\", 人口=9733276, 都道府県=\"東京都\"",
        ),
        (
            "dosi",
            "EUC-KR (Korean): \"도시\"",
            "cp949",
            "columns: 도시 (String), 인구 (Integer), 지역 (String)",
            "row: 도시=\"서울특별시\", 인구=9586195, 지역=\"수도권\"",
        ),
    ];
    for (name, reads_as, codec, columns, row) in legacy {
        assert_has(
            &card,
            &[
                &format!("it reads as {reads_as}\n  read: pd.read_csv('data/{name}.csv', encoding='{codec}')\n"),
                columns,
                row,
            ],
        );
    }
    // The calls the card gives read the files as they were written.
    let out = make(
        &mut session,
        &format!("df = {call}\nprint(list(df['city']), 'done')"),
    );
    assert!(out.contains("['Zürich', 'Genève', 'Köln'] done"), "{out}");
    let check: String = legacy
        .iter()
        .map(|(name, _, codec, _, _)| {
            format!("frame = pd.read_csv('data/{name}.csv', encoding='{codec}')\nprint(frame.iloc[0, 0], frame.shape)\n")
        })
        .collect();
    let out = make(&mut session, &format!("{check}print('done')"));
    for first in [
        "Москва (4, 2)",
        "Łódź (5, 2)",
        "北京市 (4, 3)",
        "東京都区部 (4, 3)",
        "서울특별시 (4, 3)",
    ] {
        assert!(out.contains(first), "{out}");
    }
}

#[test]
fn a_shapefile_without_its_cpg_is_read_in_the_encoding_its_text_is_in() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import geopandas as gpd
import shapely
os.makedirs("data")
layers = {
    "goroda": ("cp1251", ["Москва", "Санкт-Петербург", "Новосибирск"]),
    "chengshi": ("gbk", ["北京市", "上海市", "广州市"]),
    "staedte": ("utf-8", ["Zürich", "Genève", "Köln"]),
    "villes": ("cp1252", ["Zürich", "Genève", "Köln"]),
    "labelled": ("cp1251", ["Москва", "Тверь", "Казань"]),
}
for name, (codec, names) in layers.items():
    frame = gpd.GeoDataFrame({"name": names, "rank": [1, 2, 3]}, geometry=[shapely.Point(37.6, 55.7)] * 3, crs=4326)
    frame.to_file(f"data/{name}.shp", encoding=codec)
    if name != "labelled":
        os.remove(f"data/{name}.cpg")  # left behind, as often happens
# A download as such data often comes: a zip with no .cpg.
import zipfile
os.makedirs("parts")
frame = gpd.GeoDataFrame({"name": ["서울특별시", "부산광역시", "인천광역시"], "rank": [1, 2, 3]}, geometry=[shapely.Point(127.0, 37.5)] * 3, crs=4326)
frame.to_file("parts/dosi.shp", encoding="cp949")
with zipfile.ZipFile("data/dosi.zip", "w") as archive:
    for part in ["shp", "shx", "dbf", "prj"]:
        archive.write(f"parts/dosi.{part}", f"dosi.{part}")
misread = gpd.read_file("data/goroda.shp")["name"][0]
print(f"geopandas reads {misread!r}: done")
"#,
    );
    let card = gisclaw::card::card_for_dir(&dir.path().join("data"), "data/", 10_000);
    let unlabelled = [
        (
            "/vsizip/data/dosi.zip/dosi",
            "cp949",
            "(\"¼\u{AD}¿ïÆ¯º°½Ã\"); it is EUC-KR (Korean): \"서울특별시\"",
            "서울특별시",
        ),
        (
            "data/goroda",
            "cp1251",
            "(\"Ìîñêâà\"); it is windows-1251 (Cyrillic): \"Москва\"",
            "Москва",
        ),
        (
            "data/chengshi",
            "gb18030",
            "(\"±±¾©ÊÐ\"); it is GBK (Chinese (simplified)): \"北京市\"",
            "北京市",
        ),
        (
            "data/staedte",
            "utf-8",
            "(\"ZÃ¼rich\"); it is UTF-8: \"Zürich\"",
            "Zürich",
        ),
    ];
    for (stem, codec, misread, first) in unlabelled {
        assert_has(
            &card,
            &[
                &format!("  row: name=\"{first}\", rank=1\n"),
                &format!("text: the .dbf names no encoding (no .cpg, no language driver id), so geopandas reads it as ISO-8859-1 {misread} (shown so here)\n"),
                &format!("  read: gpd.read_file('{stem}.shp', encoding='{codec}')\n"),
            ],
        );
    }
    // Latin-1 text is what geopandas reads without a word: the card only
    // shows it right; a .cpg names the encoding, and GDAL reads it.
    assert_has(
        &card,
        &[
            "row: name=\"Zürich\", rank=1\n  row: name=\"Genève\"",
            "row: name=\"Тверь\"",
        ],
    );
    assert_eq!(card.matches("text: the .dbf").count(), 4, "{card}");
    assert_eq!(card.matches("read: gpd.read_file").count(), 4, "{card}");
    // The calls the card gives read the names that were written.
    let check: String = unlabelled
        .iter()
        .map(|(stem, codec, _, _)| {
            format!("print(gpd.read_file('{stem}.shp', encoding='{codec}')['name'][0])\n")
        })
        .collect();
    let out = make(
        &mut session,
        &format!("{check}print(gpd.read_file('data/villes.shp')['name'][1], 'done')"),
    );
    assert!(
        out.contains("서울특별시\nМосква\n北京市\nZürich\nGenève done"),
        "{out}"
    );
}

#[test]
fn a_csv_gets_the_read_call_that_reads_it_as_the_card_describes_it() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import pandas as pd
os.makedirs("data")
frame = pd.DataFrame({"GEOID": ["01001", "01003", "02013"], "name": ["Autauga", "Baldwin", "Aleutians East"],
                      "rate": [0.5, 12.25, 3.0], "pop": [55869, 223234, 3337]})
frame.to_csv("data/counties.csv", index=False)
frame.to_csv("data/kreise.csv", index=False, sep=";", decimal=",")
plain = pd.read_csv("data/counties.csv")
if plain["GEOID"].iloc[0] == 1001 and len(pd.read_csv("data/kreise.csv").columns) == 1:
    print("pandas drops the zero and does not split at ';': done")
"#,
    );
    let card = gisclaw::card::card_for_dir(&dir.path().join("data"), "data/", 10_000);
    let counties = "pd.read_csv('data/counties.csv', dtype={'GEOID': str})";
    let kreise = "pd.read_csv('data/kreise.csv', sep=';', decimal=',', dtype={'GEOID': str})";
    assert_has(
        &card,
        &[
            "columns: GEOID (String), name (String), rate (Real), pop (Integer)",
            "row: GEOID=\"01001\", name=\"Autauga\", rate=0.5, pop=55869",
            "  codes: `GEOID` is digits with leading zeros (\"01001\"), which numbers drop: read as text\n",
            &format!("  read: {counties}\n"),
            "  separator: `;`, not a comma\n  numbers: `rate` written with a decimal comma (\"0,5\")\n",
            &format!("  read: {kreise}\n"),
        ],
    );
    // Both calls read the frame that was written.
    let out = make(
        &mut session,
        &format!(
            "a = {counties}\nb = {kreise}\nprint(a.equals(frame), b.equals(frame), list(b['GEOID']), b['rate'].dtype, 'done')"
        ),
    );
    assert!(
        out.contains("True True ['01001', '01003', '02013'] float64 done"),
        "{out}"
    );
}

#[test]
fn a_big_csv_gets_an_estimated_row_count_instead_of_a_full_scan() {
    let dir = common::workdir();
    let path = dir.path().join("trips.csv");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(file, "trip_id,pickup_longitude,pickup_latitude,fare").unwrap();
    let rows: u64 = 2_200_000;
    for i in 0..rows {
        writeln!(
            file,
            "{i},{:.6},{:.6},{:.2}",
            -74.0 + (i % 1000) as f64 * 1e-4,
            40.7 + (i % 777) as f64 * 1e-4,
            2.5 + (i % 90) as f64
        )
        .unwrap();
    }
    drop(file);
    assert!(std::fs::metadata(&path).unwrap().len() > 64 << 20);
    let entry = gisclaw::card::inspect_file(dir.path(), "data/", "trips.csv").unwrap();
    let estimate = estimate_in(&entry);
    assert!(
        (estimate / rows as f64 - 1.0).abs() < 0.05,
        "estimate {estimate} vs {rows} rows:\n{entry}"
    );
    assert!(
        entry.contains("(estimated from 1 MB read in 3 places)"),
        "{entry}"
    );
    assert!(
        entry.contains(
            "coordinates: `pickup_longitude`, `pickup_latitude` — longitude/latitude in degrees"
        ),
        "{entry}"
    );
}

#[test]
fn a_big_geojson_is_described_from_its_first_features_without_gdal_reading_it_whole() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import geopandas as gpd, shapely
gpd.GeoDataFrame({"Site_ID": ["a", "b", "c"], "depth_cm": [-250.5, -120, 30.25], "n": [1, 2, 3]},
                 geometry=[shapely.Point(500000 + i, 4400000) for i in range(3)], crs="EPSG:32617").to_file("wells.geojson")
print("done")
"#,
    );
    let small = dir.path().join("wells.geojson");
    let gdal_entry = gisclaw::card::inspect_file(dir.path(), "", "wells.geojson").unwrap();
    // The library's own layout, its three features repeated past 64 MB.
    let text = std::fs::read_to_string(&small).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.starts_with("{ \"type\": \"Feature\""))
        .unwrap();
    let features: Vec<&str> = lines[first..first + 3]
        .iter()
        .map(|l| l.trim_end_matches(','))
        .collect();
    let big = dir.path().join("data/wells.geojson");
    std::fs::create_dir_all(big.parent().unwrap()).unwrap();
    let mut file = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    writeln!(file, "{}", lines[..first].join("\n")).unwrap();
    let copies: u64 = 450_000;
    for i in 0..copies {
        let comma = if i + 1 < copies { "," } else { "" };
        writeln!(file, "{}{comma}", features[(i % 3) as usize]).unwrap();
    }
    writeln!(file, "{}", lines[first + 3..].join("\n")).unwrap();
    drop(file);
    assert!(std::fs::metadata(&big).unwrap().len() > 64 << 20);
    let entry =
        gisclaw::card::inspect_file(&dir.path().join("data"), "data/", "wells.geojson").unwrap();
    let estimate = estimate_in(&entry);
    assert!(
        (estimate / copies as f64 - 1.0).abs() < 0.05,
        "estimate {estimate} vs {copies} features:\n{entry}"
    );
    assert_has(
        &entry,
        &[
            "- data/wells.geojson — vector (GeoJSON), 1 layer(s)\n  layer `wells`: Point, EPSG:32617, ≈",
            "features (estimated from 1 MB read in 3 places)",
            "  columns (of the first 50 features): Site_ID (String), depth_cm (Real), n (Integer)\n",
            "  row: Site_ID=\"a\", depth_cm=-250.5, n=1\n  row: Site_ID=\"b\", depth_cm=-120, n=2\n",
        ],
    );
    // The output checks take the input's CRS from its start too.
    let reference =
        gisclaw::outputs::sanity::Reference::from_inputs(Some(&dir.path().join("data")), "");
    assert_eq!(reference.crs, ["EPSG:32617"]);
    assert!(!reference.all_geographic);
    assert_eq!(
        reference.extent, None,
        "GDAL would have scanned the file for it"
    );
    // The same fields, types and rows as GDAL reads from the small file.
    assert_has(
        &gdal_entry,
        &[
            "layer `wells`: Point, EPSG:32617, 3 features",
            "columns: Site_ID (String), depth_cm (Real), n (Integer)",
            "row: Site_ID=\"a\", depth_cm=-250.5, n=1",
        ],
    );
}

#[test]
fn the_geoparquet_example_solves_from_its_card_and_its_outputs_are_checked() {
    let task = common::repo().join("examples/transit_access/task.yaml");
    let replay = common::repo().join("examples/transit_access/replay.jsonl");
    let out = common::workdir();
    let run = common::solve_replay(&task, &replay, out.path(), &[], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", common::text(&run));
    // The prompt's card described all three formats.
    let events = common::events(out.path());
    let prompt = events
        .iter()
        .find_map(|e| {
            e["message"]["content"]
                .as_str()
                .filter(|c| c.contains("read natively"))
        })
        .unwrap_or_else(|| panic!("no card in the transcript"))
        .to_string();
    assert_has(
        &prompt,
        &[
            "data/stops.parquet — GeoParquet",
            "/vsizip/data/districts_shp.zip/districts.shp — vector (ESRI Shapefile)",
            "coordinates: `lon`, `lat` — longitude/latitude in degrees",
        ],
    );
    // A GeoParquet result is checked for rows from its footer.
    let result = out.path().join("pred_results/district_access.parquet");
    let check = gisclaw::outputs::check(&result);
    assert_eq!(
        check,
        gisclaw::outputs::OutputCheck::Content(
            gisclaw::outputs::OutputKind::Vector,
            "6 rows (Parquet)".into()
        )
    );
    std::fs::write(&result, b"not parquet").unwrap();
    assert!(matches!(
        gisclaw::outputs::check(&result),
        gisclaw::outputs::OutputCheck::Unreadable(_)
    ));
}

#[test]
fn a_series_of_files_is_described_once_with_what_its_members_share() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import numpy as np, pandas as pd, rasterio
from rasterio.transform import from_origin
os.makedirs("data/dem")
os.makedirs("data/obs")
# A 4 × 10 grid of tiles less one; its last column in the next UTM zone.
for i in range(4):
    for j in range(10):
        if (i, j) == (2, 5):
            continue
        crs = "EPSG:32633" if j < 9 else "EPSG:32634"
        with rasterio.open(f"data/dem/tile_{i:02d}_{j:02d}.tif", "w", driver="GTiff", width=8, height=8, count=1,
                           dtype="float32", crs=crs, nodata=-9999,
                           transform=from_origin(500000 + j * 80, 5000000 - i * 80, 10, 10)) as d:
            d.write(np.full((8, 8), i * 10 + j, "float32"), 1)
# Two years of land use: an entry each, not a series.
for year in (2001, 2016):
    with rasterio.open(f"data/landuse_{year}.tif", "w", driver="GTiff", width=4, height=4, count=1, dtype="uint8",
                       crs="EPSG:32633", transform=from_origin(500000, 5000000, 100, 100)) as d:
        d.write(np.ones((4, 4), "uint8"), 1)
# One table per station, numbered without zero padding, one with an extra
# column, and a file a plain glob would take with them (of one column).
for k in range(1, 12):
    cols = {"station": [f"S{k}"], "pm25": [float(k)]}
    if k == 7:
        cols["flag"] = ["x"]
    pd.DataFrame(cols).to_csv(f"data/obs/obs_{k}.csv", index=False)
pd.DataFrame({"note": ["read me"]}).to_csv("data/obs/obs_notes.csv", index=False)
print("done")
"#,
    );
    let data = dir.path().join("data");
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    let tiles = "data/dem/tile_{00..03}_{00..09}.tif";
    assert_has(
        &card,
        &[
            "- data/dem/tile_00_00.tif — raster (GTiff), 8×8 px",
            &format!("  series: {tiles} — 39 files, "),
            "  list: import glob; paths = sorted(glob.glob('data/dem/tile_*_*.tif'))\n",
            "  absent from its number ranges: 1 (data/dem/tile_02_05.tif)\n",
            "  alike in all 39: 8×8 px, 1 band(s), Float32, pixel 10×10, nodata -9999\n",
            "  differs in CRS: EPSG:32633 in 35 (first data/dem/tile_00_00.tif); EPSG:32634 in 4 (first data/dem/tile_00_09.tif)\n",
            "- data/landuse_2001.tif — raster",
            "- data/landuse_2016.tif — raster",
            "  series: data/obs/obs_{1..11}.csv — 11 files, ",
            "  numbers: not zero-padded (plain sorted() puts 10 before 2)\n",
            "  differs in columns: station, pm25 in 10 (first data/obs/obs_1.csv); station, pm25, flag in 1 (first data/obs/obs_7.csv)\n",
            // One column, which GDAL 3.6 refuses to open: read by the card.
            "- data/obs/obs_notes.csv — table (CSV, one column)\n  `obs_notes`: 1 rows\n  columns: note (String)\n  row: note=\"read me\"\n",
        ],
    );
    // One entry per series: no other member is described or listed.
    assert!(
        !card.contains("tile_00_01.tif") && !card.contains("obs_2.csv"),
        "{card}"
    );
    assert_eq!(card.matches("series: ").count(), 2, "{card}");
    // The extent of the tiles is only given where they share a CRS.
    assert!(!card.contains("together x"), "{card}");
    // inspect_data answers for the series by the name the card gave it.
    let entry = gisclaw::card::inspect_file(&data, "data/", tiles).unwrap();
    assert!(
        entry.starts_with("- data/dem/tile_00_00.tif") && entry.contains("differs in CRS"),
        "{entry}"
    );
    // list_files shows each series on one line.
    let listing = gisclaw::agent::prompt::data_listing(Some(&data), "data/");
    assert_has(
        &listing,
        &[
            &format!("- {tiles} (39 files, "),
            "- data/obs/obs_{1..11}.csv (11 files, ",
            "- data/obs/obs_notes.csv (",
        ],
    );
    assert_eq!(listing.lines().count(), 6, "{listing}");
    // The listing lines run as written and list the members in their
    // numbers' order, nothing else.
    let lists: Vec<&str> = card
        .lines()
        .filter_map(|l| l.strip_prefix("  list: "))
        .collect();
    assert_eq!(lists.len(), 2, "{card}");
    let out = make(
        &mut session,
        &format!(
            "{}\ntiles = paths\n{}\nprint(len(tiles), tiles[0], tiles[-1], len(paths), paths[1], paths[9], paths[-1], 'done')",
            lists[0], lists[1]
        ),
    );
    assert!(
        out.contains("39 data/dem/tile_00_00.tif data/dem/tile_03_09.tif 11 data/obs/obs_2.csv data/obs/obs_10.csv data/obs/obs_11.csv done"),
        "{out}"
    );
}

#[test]
fn a_file_geodatabase_is_one_entry_read_by_its_folder_name() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import geopandas as gpd
os.makedirs("data")
towns = gpd.GeoDataFrame({"name": ["Aarau", "Baden"]}, geometry=gpd.points_from_xy([8.04, 8.31], [47.39, 47.47]), crs="EPSG:4326")
wells = gpd.GeoDataFrame({"depth_m": [12.5, 40.0, 7.25]}, geometry=gpd.points_from_xy([2600000, 2610000, 2620000], [1200000, 1210000, 1220000]), crs="EPSG:2056")
towns.to_file("data/canton.gdb", layer="towns", driver="OpenFileGDB")
wells.to_file("data/canton.gdb", layer="wells", driver="OpenFileGDB")
# The same, zipped, as Esri data is often downloaded.
import shutil
os.makedirs("zipped")
shutil.make_archive("zipped/canton_gdb", "zip", "data", "canton.gdb")
shutil.move("zipped/canton_gdb.zip", "data/canton_gdb.zip")
print(len(os.listdir("data/canton.gdb")) > 10, "done")
"#,
    );
    let data = dir.path().join("data");
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    let call = "gpd.read_file('data/canton.gdb', layer='wells')";
    assert_has(
        &card,
        &[
            "- data/canton.gdb — vector (OpenFileGDB), 2 layer(s)\n  layer `towns`: Point, EPSG:4326, 2 features\n",
            "  layer `wells`: Point, EPSG:2056, 3 features\n",
            &format!("  read: {call} for a layer other than the first"),
        ],
    );
    // Zipped, it is one member, read in place.
    let zipped = "gpd.read_file('/vsizip/data/canton_gdb.zip/canton.gdb', layer='wells')";
    assert_has(
        &card,
        &[
            "- data/canton_gdb.zip — zip archive, 1 file(s), ",
            "  - /vsizip/data/canton_gdb.zip/canton.gdb — vector (OpenFileGDB), 2 layer(s)\n",
            &format!("    read: {zipped} for a layer other than the first"),
        ],
    );
    // Its internal files are neither described nor listed.
    assert!(
        !card.contains(".gdbtable") && !card.contains("Other files"),
        "{card}"
    );
    let listing = gisclaw::agent::prompt::data_listing(Some(&data), "data/");
    assert!(
        listing.contains("- data/canton.gdb (") && !listing.contains(".gdbtable"),
        "{listing}"
    );
    let entry = gisclaw::card::inspect_file(&data, "data/", "data/canton.gdb").unwrap();
    assert!(entry.contains("layer `wells`"), "{entry}");
    // The output checks take its CRS and extent as the inputs'.
    let reference = gisclaw::outputs::sanity::Reference::from_inputs(Some(&data), "");
    assert!(
        reference.crs.contains(&"EPSG:2056".to_string()),
        "{reference:?}"
    );
    // The call the card gives reads it in the sandbox.
    let out = make(
        &mut session,
        &format!(
            "w = {call}\nz = {zipped}\nprint(len(w), w.crs.to_epsg(), w['depth_m'].sum(), z.equals(w), 'done')"
        ),
    );
    assert!(out.contains("3 2056 59.75 True done"), "{out}");
}

#[test]
fn a_wide_table_is_written_compactly_and_a_big_entry_does_not_hide_the_others() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import numpy as np, pandas as pd, geopandas as gpd
os.makedirs("data")
# A census table: estimates and margins of error for 49 age groups.
cols = {"GEOID": ["01001", "01003", "01005"], "NAME": ["Autauga", "Baldwin", "Barbour"]}
for i in range(1, 50):
    cols[f"B01001_{i:03d}E"] = [i * 10, i * 20, i * 30]
    cols[f"B01001_{i:03d}M"] = [i + 0.5, i + 1.5, i + 2.5]
cols["pop2020"] = [58805, 231767, 25223]
pd.DataFrame(cols).to_csv("data/acs_age.csv", index=False)
gpd.GeoDataFrame({"GEOID": ["01001"]}, geometry=gpd.points_from_xy([-86.6], [32.5]), crs="EPSG:4269").to_file("data/counties.shp")
print("done")
"#,
    );
    let data = dir.path().join("data");
    let entry = gisclaw::card::inspect_file(&data, "data/", "data/acs_age.csv").unwrap();
    assert_has(
        &entry,
        &[
            "  columns: 101 in all: GEOID (String), NAME (String), B01001_{001..049}E (Integer, 49 columns), B01001_{001..049}M (Real, 49 columns), pop2020 (Integer)\n",
            "  row: GEOID=\"01001\", NAME=\"Autauga\", B01001_001E=10, B01001_001M=1.5, ",
            ", … (89 more)\n",
        ],
    );
    // The entry fits a default card, with the shapefile's.
    let card = gisclaw::card::card_for_dir(&data, "data/", gisclaw::card::CARD_TOKEN_BUDGET);
    assert!(
        card.contains("- data/acs_age.csv — table")
            && card.contains("- data/counties.shp — vector"),
        "{card}"
    );
    // Where it does not fit, it is listed briefly and the smaller entry
    // after it is still given.
    let tokens = gisclaw::llm::tokens::count(&entry) as u64;
    let card = gisclaw::card::card_for_dir(&data, "data/", tokens);
    assert!(
        card.contains("- data/counties.shp — vector") && card.contains("- data/acs_age.csv ("),
        "{card}"
    );
    assert!(
        gisclaw::llm::tokens::count(&card) as u64 <= tokens,
        "{card}"
    );
}

#[test]
fn lines_above_a_csv_header_are_skipped_by_gdal_and_by_the_call_the_card_gives() {
    let (mut session, dir) = common::session();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("data/noaa.csv"),
        "Daily summaries\nGenerated 2024-01-04, station USW00014739\n\nstation,date,tmax,tmin\nUSW1,2024-01-01,12.5,3.1\nUSW1,2024-01-02,11.0,2.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("data/sites.csv"),
        "# source: survey 2023\n# units: degrees\nid;lon;lat\n1;8,5;47,3\n2;8,6;47,4\n",
    )
    .unwrap();
    let out = make(
        &mut session,
        "import pandas as pd\ntry:\n    pd.read_csv('data/noaa.csv')\nexcept pd.errors.ParserError:\n    print('pandas stops: done')",
    );
    assert!(out.contains("pandas stops"), "{out}");
    let card = gisclaw::card::card_for_dir(&dir.path().join("data"), "data/", 10_000);
    let noaa = "pd.read_csv('data/noaa.csv', skiprows=3)";
    let sites = "pd.read_csv('data/sites.csv', skiprows=2, sep=';', decimal=',')";
    assert_has(
        &card,
        &[
            "  columns: station (String), date (Date), tmax (Real), tmin (Real)\n  row: station=\"USW1\", date=\"2024-01-01\", tmax=12.5, tmin=3.1\n",
            "  preamble: 3 line(s) above the header (the first: \"Daily summaries\"), which pandas would take for the header\n",
            &format!("  read: {noaa}\n"),
            "  columns: id (Integer), lon (Real), lat (Real)\n",
            &format!("  read: {sites}\n"),
        ],
    );
    let out = make(
        &mut session,
        &format!("a = {noaa}\nb = {sites}\nprint(list(a.columns), a['tmax'].sum(), round(b['lat'].sum(), 6), 'done')"),
    );
    assert!(
        out.contains("['station', 'date', 'tmax', 'tmin'] 23.5 94.7 done"),
        "{out}"
    );
}

#[test]
fn a_sheet_with_a_title_above_its_header_is_read_from_its_header() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import pandas as pd
from openpyxl import Workbook
os.makedirs("data")
book = Workbook()
sheet = book.active
sheet.title = "Notes"
sheet.append(["Read me first"])
data = book.create_sheet("Data")
data.append(["Table 3. Population by district, 2023"])
data.append(["Source: Statistical Office"])
data.append([])
data.append(["district", "code", "population", "area_km2"])
data.append(["Nord", "01", 12000, 45.5])
data.append(["Sud", "02", 8000, 30.25])
data.append(["Ost", "03", 9500, 12.0])
book.save("data/pop.xlsx")
if list(pd.read_excel("data/pop.xlsx", sheet_name="Data").columns)[1] == "Unnamed: 1":
    print("pandas takes the title for the header: done")
"#,
    );
    let card = gisclaw::card::card_for_dir(&dir.path().join("data"), "data/", 10_000);
    let call = "pd.read_excel('data/pop.xlsx', sheet_name='Data', skiprows=3, dtype={'code': str})";
    assert_has(
        &card,
        &[
            "  `Data`: 3 rows, under a title (\"Table 3. Population by district, 2023\")\n  columns: district (String), code (String), population (Integer), area_km2 (Real)\n  row: district=\"Nord\", code=\"01\", population=12000, area_km2=45.5\n",
            "  header: row 4 of the sheet, under 3 row(s) of title and notes, which pandas would take for the header\n  codes: `code` is digits with leading zeros (\"01\"), which numbers drop: read as text\n",
            &format!("  read: {call}\n"),
        ],
    );
    let out = make(
        &mut session,
        &format!(
            "d = {call}\nprint(list(d.columns), list(d['code']), d['population'].sum(), 'done')"
        ),
    );
    assert!(
        out.contains(
            "['district', 'code', 'population', 'area_km2'] ['01', '02', '03'] 29500 done"
        ),
        "{out}"
    );
}

#[test]
fn a_categorical_raster_names_its_classes_with_their_shares() {
    let (mut session, dir) = common::session();
    make(
        &mut session,
        r#"
import os
import numpy as np, rasterio
from rasterio.transform import from_origin
os.makedirs("data")
codes = np.zeros((100, 120), "uint8")
codes[:50] = 11
codes[50:, :60] = 41
codes[50:, 60:] = 82
codes[0, 0] = 0
with rasterio.open("data/landcover.tif", "w", driver="GTiff", width=120, height=100, count=1, dtype="uint8",
                   crs="EPSG:5070", nodata=0, transform=from_origin(0, 0, 30, 30)) as d:
    d.write(codes, 1)
    d.write_colormap(1, {11: (70, 107, 159, 255), 41: (104, 171, 95, 255), 82: (171, 108, 40, 255)})
# Category names, as GDAL keeps them beside the file.
names = [""] * 83
names[11], names[41], names[82] = "Open Water", "Deciduous Forest", "Cultivated Crops"
with open("data/landcover.tif.aux.xml", "w") as f:
    f.write('<PAMDataset><PAMRasterBand band="1"><CategoryNames>'
            + "".join(f"<Category>{n}</Category>" for n in names)
            + "</CategoryNames></PAMRasterBand></PAMDataset>")
# A DEM of many values is not categorical.
with rasterio.open("data/dem.tif", "w", driver="GTiff", width=64, height=64, count=1, dtype="int16",
                   crs="EPSG:5070", transform=from_origin(0, 0, 30, 30)) as d:
    d.write(np.arange(64 * 64, dtype="int16").reshape(64, 64), 1)
print("done")
"#,
    );
    let card = gisclaw::card::card_for_dir(&dir.path().join("data"), "data/", 10_000);
    assert_has(
        &card,
        &[
            "  band 1: Byte, nodata 0, min 11 max 82 mean 36.2521\n  classes: 3 values (every pixel): 11 \"Open Water\" (50%), 41 \"Deciduous Forest\" (25%), 82 \"Cultivated Crops\" (25%); a colour table of 256 entries\n",
        ],
    );
    assert_eq!(card.matches("classes:").count(), 1, "{card}");
}

#[test]
fn numbers_with_thousands_separators_are_read_as_numbers_by_the_call_the_card_gives() {
    let (mut session, dir) = common::session();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("us.csv"),
        "county,pop\nA,\"1,234\"\nB,12\nC,\"2,345,678\"\n",
    )
    .unwrap();
    std::fs::write(
        data.join("eu.csv"),
        "Kreis;Einwohner;Dichte\nA;1.234;0,5\nB;12;1.250,25\nC;2.345.678;3\n",
    )
    .unwrap();
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    let us = "pd.read_csv('data/us.csv', thousands=',')";
    let eu = "pd.read_csv('data/eu.csv', sep=';', decimal=',', thousands='.')";
    assert_has(
        &card,
        &[
            "  numbers: `pop` written with thousands separators (\"1,234\"), which pandas reads as text unless told\n",
            &format!("  read: {us}\n"),
            "  numbers: `Einwohner`, `Dichte` written with thousands separators (\"1.234\")",
            &format!("  read: {eu}\n"),
        ],
    );
    let out = make(
        &mut session,
        &format!(
            "import pandas as pd\na = {us}\nb = {eu}\nprint(a['pop'].sum(), b['Einwohner'].sum(), b['Dichte'].sum(), 'done')"
        ),
    );
    assert!(out.contains("2346924 2346924 1253.75 done"), "{out}");
}
