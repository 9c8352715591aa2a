"""Every fact the schema card states about the real-data corpus, checked
against what the sandbox's own libraries read from the same files
(tests/all/real_data.rs).

Input: a JSON file {"FOLDER": CARD, ...}, CARD being `gisclaw card --json`
of the corpus folder FOLDER (relative to the corpus). Output: one JSON line
per dataset checked, {"path": "FOLDER/FILE", "wrong": [...], "unreadable":
"..."}: "wrong" lists each fact the card states that the libraries read
otherwise; "unreadable" is set when the sandbox's reader fails on the file
(the card must then say it cannot be read).

Readers: geopandas (pyogrio) for layers, rasterio with full masked reads in
float64 for rasters, xarray for NetCDF, and for tables the card's own read
call. Every dataset's `read_call` is run as the model would run it (from a
folder where `data/` is the corpus folder).

    $GISCLAW_VENV/bin/python tests/corpus/truth.py CORPUS CARDS.json
"""

import json
import math
import os
import sys
import tempfile
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import rasterio
import xarray as xr

warnings.filterwarnings("ignore")

# Features the card scans for geometry types (card/geometry_names.rs).
SCANNED_FEATURES = 2000

# GDAL's data type names by numpy's.
GDAL_TYPES = {
    "uint8": "Byte",
    "int8": "Int8",
    "uint16": "UInt16",
    "int16": "Int16",
    "uint32": "UInt32",
    "int32": "Int32",
    "uint64": "UInt64",
    "int64": "Int64",
    "float32": "Float32",
    "float64": "Float64",
    "complex64": "CFloat32",
    "complex128": "CFloat64",
}

# The GDAL field types a pandas dtype kind may come from.
FIELD_TYPES = {
    "i": {"Integer", "Integer64"},
    "u": {"Integer", "Integer64"},
    # An integer field with nulls reads as floats.
    "f": {"Real", "Integer", "Integer64"},
    "b": {"Integer", "Integer64"},
    "O": {"String", "Date", "DateTime", "Time", "StringList", "IntegerList",
          "RealList", "Integer64List", "Binary"},
    "M": {"Date", "DateTime"},
    "m": {"Time"},
}


def close(a: float, b: float, scale: float = 1.0) -> bool:
    """Equal to a millionth of `scale` (or of the values' size)."""
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-6 * max(scale, abs(a), abs(b), 1.0)


def epsg_of(crs):
    return None if crs is None else crs.to_epsg()


def check_crs(wrong: list, where: str, stated, crs) -> None:
    """The card's CRS (None, or {epsg, ...}) against pyproj's."""
    if crs is None:
        if stated is not None:
            wrong.append(f"{where}: the card states {stated['text']}, the file has no CRS")
        return
    if stated is None:
        wrong.append(f"{where}: the card states no CRS, the file has {crs.to_string()}")
        return
    epsg = epsg_of(crs)
    if stated["epsg"] != epsg and epsg is not None:
        wrong.append(f"{where}: the card states EPSG {stated['epsg']}, pyproj reads EPSG {epsg}")
    if stated["geographic"] != crs.is_geographic:
        wrong.append(f"{where}: geographic {stated['geographic']}, pyproj {crs.is_geographic}")


def sample_values(row: str, names: list) -> dict:
    """The card's sample row `a=1, b="x, y", c=None` as {name: text}, split
    at the names the card lists (values may hold commas)."""
    import re

    row = re.sub(r", … \(\d+ more\)$", "", row)
    values, at = {}, 0
    starts = []
    for name in names:
        found = row.find(f"{name}=", at)
        if found < 0:
            break
        starts.append((name, found))
        at = found + len(name) + 1
    for i, (name, start) in enumerate(starts):
        end = starts[i + 1][1] - 2 if i + 1 < len(starts) else len(row)
        values[name] = row[start + len(name) + 1 : end]
    return values


def check_nulls(wrong: list, where: str, rows: list, names: list, df) -> None:
    """A sample value is `None` exactly where pandas reads a missing one."""
    for i, row in enumerate(rows[: len(df)]):
        for name, text in sample_values(row, names).items():
            if name not in df.columns or text == "(bytes)":
                continue
            value = df[name].iloc[i]
            try:
                missing = bool(pd.isna(value)) if not isinstance(value, (list, tuple, np.ndarray)) else False
            except (TypeError, ValueError):
                missing = False
            if missing and text != "None":
                wrong.append(f"{where}: row {i} {name}={text}, pandas reads it as missing")
            elif not missing and text == "None":
                wrong.append(f"{where}: row {i} {name}=None, pandas reads {value!r}")


def check_layer(wrong: list, source: str, layer: dict) -> None:
    """One layer's facts against geopandas' read of it."""
    name = layer["name"]
    where = f"layer {name}"
    if layer.get("title_rows"):
        return
    options = {"USE_CUSTOM_INDEXING": "NO"} if source.lower().endswith((".pbf", ".osm")) else {}
    if layer["geometry"] is None:
        df = pyogrio.read_dataframe(source, layer=name, read_geometry=False, **options)
    elif layer["geometry"]["unreadable"]:
        # geopandas cannot read these geometries: the card says so, and
        # its fields are read without them.
        try:
            gpd.read_file(source, layer=name)
            wrong.append(f"{where}: the card calls its geometries unreadable, geopandas reads them")
        except Exception:
            pass
        df = pyogrio.read_dataframe(source, layer=name, read_geometry=False, **options)
    else:
        df = gpd.read_file(source, layer=name, **options)
    if layer["features"] is None:
        pass  # said to be unknown
    elif not layer["features_estimated"] and layer["features"] != len(df):
        wrong.append(f"{where}: {layer['features']} features stated, {len(df)} read")
    columns = [c for c in df.columns if c != "geometry"]
    stated = [c["name"] for c in layer["columns"]]

    if stated != columns:
        wrong.append(f"{where}: columns {stated}, read {columns}")
    else:
        for column in layer["columns"]:
            kind = df[column["name"]].dtype.kind
            if column["dtype"] not in FIELD_TYPES.get(kind, set()):
                wrong.append(
                    f"{where}: column {column['name']} is {column['dtype']}, read as {df[column['name']].dtype}"
                )
    if stated == columns:
        check_nulls(wrong, where, layer["sample_rows"], stated, df)
    geometry = layer["geometry"]
    if geometry is None or geometry["unreadable"]:
        if "geometry" in df.columns and df.geometry.notna().any():
            wrong.append(f"{where}: the card states no geometry, geopandas reads some")
        return
    check_crs(wrong, where, layer["crs"], df.crs)
    scanned = df.geometry.iloc[:SCANNED_FEATURES].dropna()
    counts = scanned.geom_type.value_counts().to_dict()
    stated_counts = {t["name"]: t["features"] for t in geometry["types"]}
    if stated_counts and stated_counts != counts:
        wrong.append(f"{where}: geometry types {stated_counts}, read {counts}")
    if not stated_counts and counts:
        wrong.append(f"{where}: no geometry types stated, read {counts}")
    has_z = bool(df.has_z.any()) if len(df) else False
    if len(scanned) and geometry["has_z"] != has_z:
        wrong.append(f"{where}: has_z {geometry['has_z']}, read {has_z}")
    present = df.geometry[df.geometry.notna() & ~df.geometry.is_empty]
    if layer["extent"] is not None and not len(present):
        wrong.append(f"{where}: extent {layer['extent']} stated, no geometry holds a coordinate")
    if layer["extent"] is not None and len(present):
        bounds = present.total_bounds
        size = max(bounds[2] - bounds[0], bounds[3] - bounds[1], 1.0)
        # A declared extent (a GeoPackage's contents table) is close, to 1 %
        # of the layer's size; one read from the features is exact.
        tolerance = size * (1e-2 if layer["extent_declared"] else 1e-6)
        if not all(abs(a - b) <= tolerance + 1e-9 * abs(b) for a, b in zip(layer["extent"], bounds)):
            wrong.append(f"{where}: extent {layer['extent']}, read {list(bounds)}")


def check_vector(wrong: list, source: str, dataset: dict) -> None:
    layers = [name for name, _ in pyogrio.list_layers(source)]
    stated = [layer["name"] for layer in dataset["layers"]]
    if stated != layers[: len(stated)] or len(layers) != len(stated) + dataset.get("more_layers", 0):
        wrong.append(f"layers {stated} (+{dataset.get('more_layers', 0)}), read {layers}")
        return
    for layer in dataset["layers"]:
        check_layer(wrong, source, layer)


def check_table(wrong: list, df, dataset: dict) -> None:
    """A table's facts against the frame its own read call gives."""
    if dataset.get("lines"):
        return
    layer = dataset["layers"][0]
    if layer.get("title_rows"):
        return
    if layer["features"] is None:
        pass  # said to be unknown
    elif not layer["features_estimated"] and layer["features"] != len(df):
        wrong.append(f"{layer['features']} rows stated, {len(df)} read")
    stated = [c["name"] for c in layer["columns"]]
    columns = [str(c) for c in df.columns]
    if stated != columns:
        wrong.append(f"columns {stated}, read {columns}")
        return
    check_nulls(wrong, "sample", layer["sample_rows"], stated, df)
    for note in layer["notes"]:
        check_span(wrong, note, df)
    excel = dataset["path"].lower().endswith((".xlsx", ".ods"))
    for column, name in zip(layer["columns"], df.columns):
        kind = df[name].dtype.kind
        if df[name].isna().all():
            continue  # no value: pandas makes it float64 whatever it holds
        if excel and column["dtype"] == "Real" and kind in "iu":
            continue  # openpyxl returns whole-number cells as int
        # GDAL's type detection also finds dates pandas leaves as text.
        if column["dtype"] not in FIELD_TYPES.get(kind, set()):
            wrong.append(f"column {name} is {column['dtype']}, read as {df[name].dtype}")


def check_span(wrong: list, note: str, df) -> None:
    """A coordinates note's ranges (`(x 1…2, y 3…4)`) against every row's,
    unless the note says they are the first rows'."""
    import re

    found = re.search(r"\(`?(.+?) (-?[\d.e+-]+)…(-?[\d.e+-]+), (.+?) (-?[\d.e+-]+)…(-?[\d.e+-]+)( in the first \d+ rows)?\)", note)
    if not note.startswith("coordinates:") or not found:
        return
    if found.group(7):
        return
    for name, lo, hi in ((found.group(1), found.group(2), found.group(3)), (found.group(4), found.group(5), found.group(6))):
        if name not in df.columns:
            continue
        values = pd.to_numeric(df[name], errors="coerce").dropna()
        if not len(values):
            continue
        for stated, read in ((float(lo), values.min()), (float(hi), values.max())):
            if abs(stated - read) > 1e-3 * max(abs(read), 1.0):
                wrong.append(f"coordinates: {name} stated {lo}…{hi}, every row gives {values.min()}…{values.max()}")
                break


def check_raster(wrong: list, source: str, dataset: dict) -> None:
    grid = dataset["grid"]
    with rasterio.open(source) as ds:
        if (grid["width"], grid["height"]) != (ds.width, ds.height):
            wrong.append(f"{grid['width']}×{grid['height']} px stated, read {ds.width}×{ds.height}")
        if len(dataset["bands"]) + dataset.get("more_bands", 0) != ds.count:
            wrong.append(f"{len(dataset['bands'])} bands stated, read {ds.count}")
        check_crs(wrong, "grid", grid["crs"], ds.crs)
        if grid["transform"] is not None and not ds.transform.is_identity:
            gt = ds.transform.to_gdal()
            scale = max(abs(gt[1]), abs(gt[5]))
            if not all(close(a, b, scale) for a, b in zip(grid["transform"], gt)):
                wrong.append(f"transform {grid['transform']}, read {list(gt)}")
        for band in dataset["bands"]:
            i = band["index"]
            if not band["readable"]:
                continue  # said to be unreadable: no pixel fact to check
            where = f"band {i}"
            if band["dtype"] != GDAL_TYPES.get(ds.dtypes[i - 1]):
                wrong.append(f"{where}: {band['dtype']}, read {ds.dtypes[i - 1]}")
            nodata = ds.nodatavals[i - 1]
            if (band["nodata"] is None) != (nodata is None) or (
                nodata is not None and not close(band["nodata"], nodata)
            ):
                wrong.append(f"{where}: nodata {band['nodata']}, read {nodata}")
            values = ds.read(i, masked=True).astype("float64")
            valid = values.compressed()
            valid = valid[~np.isnan(valid)]
            stats = band["stats"]
            if valid.size == 0:
                if stats is not None:
                    wrong.append(f"{where}: statistics stated for a band without a valid pixel")
                continue
            if stats is None:
                wrong.append(f"{where}: no statistics stated, {valid.size} valid pixels read")
                continue
            lo, hi, mean = valid.min(), valid.max(), valid.mean()
            if stats["accuracy"] == "exact":
                if not (close(stats["min"], lo) and close(stats["max"], hi)):
                    wrong.append(f"{where}: min {stats['min']} max {stats['max']}, read {lo} {hi}")
                if stats["mean"] is None or not math.isclose(stats["mean"], mean, rel_tol=1e-6, abs_tol=1e-6):
                    wrong.append(f"{where}: mean {stats['mean']}, read {mean}")
                if stats["valid_pixels"] != valid.size:
                    wrong.append(f"{where}: {stats['valid_pixels']} valid pixels, read {valid.size}")
                classes = band["classes"]
                if classes:
                    found, counts = np.unique(valid.astype("int64"), return_counts=True)
                    read = dict(zip(found.tolist(), counts.tolist()))
                    stated = {c["value"]: c["pixels"] for c in classes}
                    if stated != read:
                        wrong.append(f"{where}: classes {stated}, read {read}")
            else:
                # Approximate: within the exact range.
                span = max(hi - lo, 1.0)
                if stats["min"] < lo - 1e-6 * span or stats["max"] > hi + 1e-6 * span:
                    wrong.append(
                        f"{where}: approximate min {stats['min']} max {stats['max']} outside the range read, {lo}..{hi}"
                    )


def stored_type(variable) -> str:
    """numpy's name of what a variable stores (`char` for a char array)."""
    dtype = variable.encoding.get("dtype", variable.dtype)
    if dtype.kind == "S" and dtype.itemsize == 1:
        return "char"
    if dtype.kind in "SUO":
        return "string"
    return dtype.name


def check_multidim(wrong: list, source: str, dataset: dict) -> None:
    # Opened as the card says (its read call may need decode_times=False
    # or another engine); times stay undecoded for the types.
    call = dataset.get("read_call") or f"xr.open_dataset({source!r})"
    if "decode_times" not in call:
        call = call[:-1] + ", decode_times=False)"
    ds = eval(call, {"xr": xr})
    if dataset.get("grid"):
        return
    dims = {d["name"]: d["size"] for d in dataset.get("dimensions", [])}
    for name, size in ds.sizes.items():
        if dims.get(name) != size:
            wrong.append(f"dimension {name}={size} read, stated {dims.get(name)}")
    stated = {v["name"]: v for v in dataset.get("variables", [])}
    more = any(n.startswith("… ") and "more variables" in n for n in dataset["notes"])
    for name, variable in ds.variables.items():
        if name not in stated:
            if not more:
                wrong.append(f"variable {name} read, not stated")
            continue
        kind = stored_type(variable)
        if stated[name]["dtype"].split(" ")[0].rstrip(",") != kind:
            wrong.append(f"variable {name}: {stated[name]['dtype']} stated, the file stores {kind}")
        if list(stated[name]["dimensions"]) != list(variable.dims):
            wrong.append(f"variable {name}: dimensions {stated[name]['dimensions']}, read {list(variable.dims)}")


def run_read_call(wrong: list, dataset: dict):
    """Runs the dataset's read call as the model would; returns what it
    read, or None when it failed (said in `wrong`)."""
    call = dataset.get("read_call")
    if not call:
        return None
    try:
        value = eval(call, {"gpd": gpd, "pd": pd, "pyogrio": pyogrio, "rasterio": rasterio, "xr": xr})
    except Exception as e:
        wrong.append(f"its read call `{call}` fails: {type(e).__name__}: {e}")
        return None
    if hasattr(value, "close") and not isinstance(value, (pd.DataFrame,)):
        value.close()
    return value


def check(dataset: dict, folder: Path) -> dict:
    """The facts of one dataset (a path under `data/`) checked against the
    libraries' read of it."""
    wrong: list = []
    source = dataset["path"]
    kind = dataset["kind"]
    stated_unreadable = dataset["unreadable"] is not None or any(
        not b["readable"] for b in dataset.get("bands", [])
    ) or any((l.get("geometry") or {}).get("unreadable") for l in dataset.get("layers", []))
    try:
        if kind == "vector":
            check_vector(wrong, source, dataset)
        elif kind == "raster" or (kind == "multidim" and dataset.get("grid")):
            check_raster(wrong, source, dataset)
        elif kind == "multidim":
            check_multidim(wrong, source, dataset)
        elif kind == "table":
            frame = run_read_call(wrong, dataset)
            if frame is not None:
                check_table(wrong, frame, dataset)
            return {"wrong": wrong}
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if stated_unreadable:
            return {"wrong": [], "unreadable": f"{type(e).__name__}: {first}", "said": True}
        return {"wrong": wrong, "unreadable": f"{type(e).__name__}: {first}", "said": False}
    if kind != "table":
        run_read_call(wrong, dataset)
    return {"wrong": wrong}


def refuted(dataset: dict) -> dict:
    """A dataset the card calls unreadable: wrong when the sandbox's
    reader reads it."""
    source = dataset["path"]
    try:
        if dataset["kind"] == "raster":
            with rasterio.open(source) as ds:
                ds.read()
        elif dataset["kind"] == "table":
            pd.read_csv(source)
        elif dataset["kind"] == "vector":
            gpd.read_file(source)
        else:
            return {"wrong": []}
    except Exception as e:
        return {"wrong": [], "unreadable": f"{type(e).__name__}", "said": True}
    return {"wrong": [f"the card says it cannot be read ({dataset['unreadable']}); the sandbox's reader reads it"]}


def main() -> None:
    corpus = Path(sys.argv[1]).resolve()
    cards = json.loads(Path(sys.argv[2]).read_text())
    with tempfile.TemporaryDirectory() as scratch:
        for folder, card in sorted(cards.items()):
            # The model's view: `data/` is the folder, paths are relative.
            os.chdir(scratch)
            link = Path(scratch) / "data"
            if link.is_symlink():
                link.unlink()
            link.symlink_to(corpus / folder)
            for dataset in card["datasets"]:
                rel = dataset["path"].removeprefix("data/")
                if "/" in rel:
                    continue  # a nested folder's file: checked with its own folder
                checked = [dataset] + [
                    m for m in dataset.get("members", []) if m["unreadable"] is None
                ]
                if dataset["kind"] == "archive":
                    checked = checked[1:]
                for one in checked:
                    if one["unreadable"] is not None:
                        result = refuted(one)
                    else:
                        result = check(one, corpus / folder)
                    name = one["path"].replace("/vsizip/", "").replace("data/", "", 1)
                    print(json.dumps({"path": f"{folder}/{name}", **result}), flush=True)


if __name__ == "__main__":
    main()
