"""What the sandbox's own libraries read from each file of the real-data
corpus, as the facts the schema card must state (tests/all/real_data.rs).

For every file: one JSON line {"path": "FOLDER/FILE", "states": [...],
"never": [...]}; each item of "states" is a string the card's entry must
contain, or a list of strings one of which it must contain; "never" lists
strings it must not contain. Facts come from geopandas (pyogrio), rasterio
with full masked reads in float64, pandas' default read_csv and xarray.

    $GISCLAW_VENV/bin/python tests/corpus/truth.py CORPUS
"""

import json
import sys
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import rasterio
import xarray as xr

warnings.filterwarnings("ignore")

VECTOR = {".shp", ".geojson", ".gpkg", ".gpx", ".gml", ".topojson", ".json"}
RASTER = {".tif", ".tiff", ".asc"}
TABLE = {".csv"}
MULTIDIM = {".nc"}
# Bands the card describes, and layers.
BANDS, LAYERS = 8, 10


def number(x: float) -> str:
    """A number as the card writes it (integral without decimals, else six
    decimals with trailing zeros cut)."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6f}".rstrip("0").rstrip(".")


def mean_text(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".")


def crs_fact(crs):
    if crs is None:
        return "no CRS"
    epsg = crs.to_epsg()
    return f"EPSG:{epsg}" if epsg else None


def geometry_fact(gdf) -> str | None:
    """The card's geometry text: the types the features hold, by count."""
    types = gdf.geom_type.dropna()
    if types.empty:
        return None
    suffix = " Z" if bool(gdf.has_z.any()) else ""
    counts = sorted(types.value_counts().items(), key=lambda kv: (-kv[1], kv[0]))
    if len(counts) == 1:
        return counts[0][0] + suffix
    names = "/".join(name + suffix for name, _ in counts)
    detail = ", ".join(f"{n} {name}" for name, n in counts)
    return f"{names} ({detail})"


def vector(path: Path) -> dict:
    states, never = [], ["Multi Polygon", "Multi Line String", "3D "]
    layers = [name for name, _ in pyogrio.list_layers(path)][:LAYERS]
    for name in layers:
        gdf = gpd.read_file(path, layer=name)
        head = f"layer `{name}`: "
        geometry = geometry_fact(gdf)
        if geometry:
            states.append(head + geometry + ",")
        states.append(f", {len(gdf)} features")
        crs = crs_fact(gdf.crs)
        if crs:
            states.append(crs)
        if gdf.crs is None:
            never.append("EPSG:4326 is the likely CRS")
    return {"states": states, "never": never}


def table(path: Path) -> dict:
    df = pd.read_csv(path)
    rows = len(df)
    return {
        "states": [
            [f"{rows} rows", f"{rows} features"],
            f"{df.columns[0]} (",
        ],
        "never": ["field_1 ("],
    }


def raster(path: Path) -> dict:
    states = []
    with rasterio.open(path) as ds:
        states.append(f"{ds.width}×{ds.height} px, {ds.count} band(s)")
        crs = crs_fact(ds.crs)
        if crs:
            states.append(crs)
        for i in range(1, min(ds.count, BANDS) + 1):
            nodata = ds.nodatavals[i - 1]
            values = ds.read(i, masked=True).astype("float64")
            valid = values.compressed()
            valid = valid[~np.isnan(valid)]
            line = f"band {i}: "
            states.append(line)
            states.append("no nodata" if nodata is None else f"nodata {number(nodata)}")
            if valid.size == 0:
                states.append("no valid pixel")
                continue
            states.append(
                f"min {number(valid.min())} max {number(valid.max())} mean {mean_text(valid.mean())}"
            )
    return {"states": states, "never": ["approximate"]}


def multidim(path: Path) -> dict:
    ds = xr.open_dataset(path, decode_times=False)
    states = [f"{name}={size}" for name, size in ds.sizes.items()]
    states += [f"variable {name}(" for name in ds.data_vars]
    return {"states": states, "never": []}


# The reader of each suffix.
READERS = {
    **{s: table for s in TABLE},
    **{s: vector for s in VECTOR},
    **{s: raster for s in RASTER},
    **{s: multidim for s in MULTIDIM},
}


def main() -> None:
    corpus = Path(sys.argv[1])
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or ".downloads" in path.parts:
            continue
        suffix = path.suffix.lower()
        if suffix not in READERS:
            continue
        try:
            facts = READERS[suffix](path)
        except Exception as e:  # what the sandbox's reader says, as a fact
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            facts = {"unreadable": f"{type(e).__name__}: {first}"}
        rel = path.relative_to(corpus).as_posix()
        print(json.dumps({"path": rel, **facts}))


if __name__ == "__main__":
    main()
