"""What the sandbox's own libraries read from a data folder: the check
behind the schema card (the host's `card::library`).

The card's facts come from the host's GDAL, run in a confined reader; the
model reads with geopandas/pyogrio, pandas and xarray, whose GDAL is the
wheels' and which build shapely geometries GDAL never builds. So each
dataset the card describes is read again here, in a throwaway fork of a
sandbox session, exactly as the model would read it, and the answer
amends the card: what fails and with what error, a call that works instead,
the layers pyogrio lists, column names as pandas makes them, exact counts
and extents, every variable of a NetCDF file with numpy's type.

Only `library_view` is called from outside; it imports the libraries
lazily (the worker preloads them) and never lets one dataset's failure
stop the others. Untrusted bytes are read here and only here: the host
gets plain JSON of bounded size.
"""

import ast
import json
import math
import os
import tempfile
import time
import warnings

# Features whose geometry types are counted (as the host counts them).
_SCANNED = 2000
# Rows sampled, as the card's own sample.
_SAMPLE_ROWS = 3
# Layers read per vector dataset (the card lists 10).
_MAX_LAYERS = 10
# Layer names reported per vector dataset.
_MAX_LISTED = 200
# Variables reported per multidimensional dataset.
_MAX_VARIABLES = 60
# Calls a card's read call may make, by the name the model uses.
_CALLS = {
    "gpd.read_file",
    "pd.read_csv",
    "pd.read_excel",
    "pd.read_table",
    "pyogrio.read_dataframe",
    "xr.open_dataset",
    "rasterio.open",
}


def _error(exc):
    """`Type: first line` of an exception, bounded."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:300] if first else type(exc).__name__


def _number(value):
    """A float for JSON: None for NaN and infinities."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _nodata(value):
    """A nodata value for JSON: a number, or "nan"/"inf"/"-inf" (JSON has
    no such numbers), None when there is none."""
    if value is None:
        return None
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _crs(crs):
    """A CRS as the card states it: text, EPSG code, geographic."""
    if crs is None:
        return None
    try:
        epsg = crs.to_epsg()
    except Exception:
        epsg = None
    # pyproj's CRS has a name; rasterio's may not.
    name = getattr(crs, "name", None) or crs.to_string()[:80] or "?"
    text = f"EPSG:{epsg}" if epsg else f"CRS {name}"
    return {"text": text, "epsg": epsg, "geographic": bool(crs.is_geographic)}


# Values shown per sample row (as the card's own sample).
_ROW_VALUES = 12


def _sample_value(value):
    """A sample value as plain JSON: None where pandas reads a missing one,
    a number, text, or {"bytes": n}."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"bytes": len(value)}
    if isinstance(value, (list, tuple, dict)):
        return str(value)[:200]
    try:
        if value is None or bool(_isna(value)):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    if hasattr(value, "item") and not isinstance(value, str):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _number(value)
    return str(value)[:200]


def _samples(frame):
    """The first rows as [[name, value], …], the geometry left out."""
    columns = [(i, str(n)) for i, n in enumerate(frame.columns) if n != "geometry"][:_ROW_VALUES]
    return [
        [[name, _sample_value(frame.iat[row, i])] for i, name in columns]
        for row in range(min(_SAMPLE_ROWS, len(frame)))
    ]


def _isna(value):
    import pandas as pd

    return pd.isna(value)


def _columns(frame):
    return [[str(name), str(dtype)] for name, dtype in frame.dtypes.items() if name != "geometry"]


def _frame_facts(frame):
    """Columns, rows and the sample's nulls of a pandas frame."""
    return {
        "columns": _columns(frame),
        "rows": int(len(frame)),
        "sample": _samples(frame),
    }


def _geometry_facts(frame):
    """Counts of geometry types (first features), Z, CRS and the bounds of
    every non-empty geometry (None when there is none)."""
    geometry = frame.geometry
    present = geometry[geometry.notna() & ~geometry.is_empty]
    counts = geometry.iloc[:_SCANNED].dropna().geom_type.value_counts()
    bounds = None
    if len(present):
        bounds = [_number(v) for v in present.total_bounds]
        if any(v is None for v in bounds):
            bounds = None
    return {
        "types": [[str(name), int(n)] for name, n in counts.items()],
        "has_z": bool(present.has_z.any()) if len(present) else False,
        "crs": _crs(frame.crs),
        "bounds": bounds,
        "empty": int(len(geometry) - len(present)),
    }


def _coordinate_ranges(frame, names):
    """Min and max over every row of the numeric columns named."""
    import pandas as pd

    ranges = {}
    for name in names:
        if name in frame.columns:
            values = pd.to_numeric(frame[name], errors="coerce").dropna()
            if len(values):
                ranges[name] = [_number(values.min()), _number(values.max())]
    return ranges


def _read_layer(path, name, options):
    """One layer as geopandas reads it (with the card's own read options:
    a shapefile's encoding, OpenStreetMap's indexing), or why not and a
    read that works."""
    import geopandas as gpd
    import pyogrio

    try:
        frame = gpd.read_file(path, layer=name, **options)
        error = None
    except Exception as exc:
        error = _error(exc)
    if error is None:
        facts = _frame_facts(frame)
        if isinstance(frame, gpd.GeoDataFrame) and frame.geometry is not None:
            facts["geometry"] = _geometry_facts(frame)
        return {"name": name, "error": None, **facts}
    # The same layer with the geometries geopandas cannot build left out.
    try:
        frame = gpd.read_file(path, layer=name, on_invalid="ignore", **options)
        works = {"call": "on_invalid='ignore'", "dropped": int(frame.geometry.isna().sum())}
    except Exception:
        try:
            frame = pyogrio.read_dataframe(path, layer=name, read_geometry=False, **options)
            works = {"call": "read_geometry=False", "dropped": None}
        except Exception:
            return {"name": name, "error": error, "works": None}
    return {"name": name, "error": error, "works": works, **_frame_facts(frame)}


def _read_options(read_call, folder):
    """The options of the card's own read call (all but the path and the
    layer), as keyword arguments and as the text the card writes."""
    try:
        name, _, kwargs = _checked_call(read_call, folder) if read_call else (None, None, {})
    except Exception:
        kwargs = {}
    options = {k: v for k, v in kwargs.items() if k not in ("layer", "read_geometry")}
    return options, ", ".join(f"{k}={v!r}" for k, v in options.items())


def _vector(path, layers, read_call, folder):
    """A vector's layers as pyogrio lists them, each as geopandas reads it."""
    import pyogrio

    options, extra = _read_options(read_call, folder)
    if path.lower().endswith((".pbf", ".osm")):
        options.setdefault("USE_CUSTOM_INDEXING", "NO")
    try:
        listed = [[str(n), str(t) if t is not None else None] for n, t in pyogrio.list_layers(path)]
    except Exception as exc:
        return {"error": _error(exc)}
    names = [n for n, _ in listed]
    wanted = list(dict.fromkeys([n for n in layers if n in names] + names))[:_MAX_LAYERS]
    return {
        "error": None,
        "listed": listed[:_MAX_LISTED],
        "more_listed": max(0, len(listed) - _MAX_LISTED),
        "extra": extra or None,
        "layers": [_read_layer(path, n, options) for n in wanted],
    }


# Names a read call's arguments may use: the dtypes of `dtype=`.
_DTYPE_NAMES = {"str": str, "int": int, "float": float, "bool": bool, "object": object}


def _value(node):
    """A literal argument: constants, containers of them, the dtype names."""
    if isinstance(node, ast.Name) and node.id in _DTYPE_NAMES:
        return _DTYPE_NAMES[node.id]
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(e) for e in node.elts]
    return ast.literal_eval(node)


def _source(node, folder):
    """A read call's first argument: a path under the data folder, or an
    archive's member opened exactly as the card writes it
    (`zipfile.ZipFile('data/a.zip').open('x.csv')`,
    `tarfile.open('data/a.tar').extractfile('x.csv')`): one string each,
    nothing else, the archive inside the data folder."""
    import ast
    import tarfile
    import zipfile

    def inside(path):
        if not isinstance(path, str) or not os.path.realpath(path).startswith(os.path.realpath(folder) + os.sep):
            raise ValueError(f"not a file of the data folder: {path!r}")
        return path

    if isinstance(node, ast.Constant):
        return inside(node.value)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and isinstance(node.func.value, ast.Call)
        and len(node.func.value.args) == 1
        and not node.func.value.keywords
        and isinstance(node.func.value.args[0], ast.Constant)
    ):
        opener = ast.unparse(node.func.value.func)
        archive = inside(node.func.value.args[0].value)
        member = node.args[0].value
        if opener == "zipfile.ZipFile" and node.func.attr == "open":
            return zipfile.ZipFile(archive).open(member)
        if opener == "tarfile.open" and node.func.attr == "extractfile":
            return tarfile.open(archive).extractfile(member)
    raise ValueError("a source other than a data file or an archive's member")


def _checked_call(call, folder):
    """The card's read call as (function name, args, kwargs), only when it
    is one call of a known reader of a file under `folder` whose other
    arguments are literals or dtype names."""
    tree = ast.parse(call, mode="eval").body
    if not isinstance(tree, ast.Call) or not tree.args:
        raise ValueError("not a call")
    name = ast.unparse(tree.func)
    if name not in _CALLS:
        raise ValueError(f"not a reader: {name}")
    if any(k.arg is None for k in tree.keywords):
        raise ValueError("** arguments")
    args = [_source(tree.args[0], folder)] + [_value(a) for a in tree.args[1:]]
    return name, args, {k.arg: _value(k.value) for k in tree.keywords}


def _function(name):
    import geopandas as gpd
    import pandas as pd
    import pyogrio
    import rasterio
    import xarray as xr

    modules = {"gpd": gpd, "pd": pd, "pyogrio": pyogrio, "xr": xr, "rasterio": rasterio}
    module, attr = name.split(".", 1)
    return getattr(modules[module], attr)


def _table(call, coordinates, folder):
    """The frame the card's read call gives: columns, rows, sample and the
    coordinate columns' ranges over every row."""
    try:
        name, args, kwargs = _checked_call(call, folder)
        frame = _function(name)(*args, **kwargs)
    except Exception as exc:
        return {"error": _error(exc)}
    if isinstance(frame, dict):  # read_excel(sheet_name=None)
        frame = next(iter(frame.values()))
    facts = _frame_facts(frame)
    facts["ranges"] = _coordinate_ranges(frame, coordinates)
    return {"error": None, **facts}


def _type_name(dtype):
    """numpy's name of a type, `char` for single bytes of text and
    `string` for any other text."""
    kind = getattr(dtype, "kind", "")
    if kind == "S" and dtype.itemsize == 1:
        return "char"
    if kind in ("S", "U", "O", "T"):
        return "string"
    return getattr(dtype, "name", str(dtype))


def _variable_type(variable):
    return _type_name(variable.dtype)


def _multidim(path):
    """A NetCDF/HDF5 file as xarray opens it (with the arguments that open
    it when the plain call fails): dimensions and every variable."""
    import xarray as xr

    attempts = [
        ({}, None),
        ({"decode_times": False}, "decode_times=False"),
        # netCDF3 files that the netCDF4 engine misreads (names in a legacy
        # encoding) open with scipy's reader.
        ({"engine": "scipy"}, "engine='scipy'"),
        ({"engine": "scipy", "decode_times": False}, "engine='scipy', decode_times=False"),
    ]
    error = None
    for kwargs, extra in attempts:
        try:
            with xr.open_dataset(path, **kwargs) as ds:
                variables = []
                for name, variable in list(ds.variables.items())[:_MAX_VARIABLES]:
                    encoding = variable.encoding.get("dtype")
                    # The type in the file (xarray decodes masked and scaled
                    # integers to floats, char arrays to strings).
                    stored = _type_name(encoding) if encoding is not None else None
                    variables.append(
                        {
                            "name": str(name),
                            "dimensions": [str(d) for d in variable.dims],
                            "dtype": _variable_type(variable),
                            "stored": stored,
                            "coordinate": name in ds.coords,
                            "grid_mapping": bool(variable.attrs.get("grid_mapping_name")),
                        }
                    )
                return {
                    "error": error,
                    "extra": extra,
                    "dimensions": [[str(k), int(v)] for k, v in ds.sizes.items()],
                    "variables": variables,
                    "more_variables": max(0, len(ds.variables) - _MAX_VARIABLES),
                }
        except Exception as exc:
            if error is None:
                error = _error(exc)
    return {"error": error, "extra": None}


# Pixels a band may have for its statistics to be read here.
_STATS_PIXELS = 16 * 1024 * 1024


def _raster(path, stats):
    """A raster as rasterio opens it: grid, bands with type and nodata, and
    with `stats` every band's exact statistics (masked read, float64) where
    it has at most _STATS_PIXELS pixels."""
    import numpy as np
    import rasterio

    try:
        with rasterio.open(path) as ds:
            transform = None if ds.transform.is_identity else [_number(v) for v in ds.transform.to_gdal()]
            answer = {
                "error": None,
                "width": ds.width,
                "height": ds.height,
                "count": ds.count,
                "crs": _crs(ds.crs),
                "transform": transform,
                "bands": [],
            }
            for i in range(1, min(ds.count, 8) + 1):
                band = {"dtype": ds.dtypes[i - 1], "nodata": _nodata(ds.nodatavals[i - 1]), "stats": None}
                if stats and ds.width * ds.height <= _STATS_PIXELS:
                    try:
                        values = ds.read(i, masked=True).astype("float64")
                        valid = values.compressed()
                        valid = valid[~np.isnan(valid)]
                        # A corrupt file may decode to other values on
                        # each read: then nothing about its pixels holds.
                        # (Read again through a new handle: one handle's
                        # blocks are cached.)
                        with rasterio.open(path) as twice:
                            again = twice.read(i, masked=True).astype("float64")
                        if not np.array_equal(values.filled(np.nan), again.filled(np.nan), equal_nan=True):
                            band["error"] = "its pixels decode to other values on each read (a corrupt file)"
                            answer["bands"].append(band)
                            continue
                        if valid.size:
                            band["stats"] = {
                                "min": _number(valid.min()),
                                "max": _number(valid.max()),
                                "mean": _number(valid.mean()),
                                "valid": int(valid.size),
                            }
                        else:
                            band["stats"] = {"valid": 0}
                    except Exception as exc:
                        band["error"] = _error(exc)
                answer["bands"].append(band)
            return answer
    except Exception as exc:
        return {"error": _error(exc)}


def _one(dataset, folder):
    """What the libraries read of one dataset (None for a kind not read)."""
    kind = dataset.get("kind")
    path = dataset["path"]
    if kind == "vector":
        view = _vector(path, dataset.get("layers") or [], dataset.get("read_call"), folder)
        if view.get("error") and path.lower().endswith(".vrt"):
            # A VRT the card's reader refused may be a raster's.
            raster = _raster(path, True)
            if raster.get("error") is None:
                return raster
        return view
    if kind == "table" and dataset.get("read_call"):
        return _table(dataset["read_call"], dataset.get("coordinates") or [], folder)
    if kind == "multidim":
        return _multidim(path)
    if kind == "raster":
        return _raster(path, bool(dataset.get("stats")))
    return None


def library_view(folder, shown_as, datasets_json, answer_path, seconds):
    """Reads each dataset of `datasets_json` (a JSON list of {path, kind,
    layers, read_call, coordinates, stats}, paths as the model names them under
    `shown_as`) with the sandbox's libraries from a scratch folder where
    `shown_as` is `folder`, and writes {path: view} to `answer_path`. Stops
    starting new reads after `seconds`; those left are absent."""
    warnings.filterwarnings("ignore")
    datasets = json.loads(datasets_json)
    answer = {}
    started = time.monotonic()
    here = os.getcwd()
    folder = os.path.realpath(folder)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"the data folder is not in the sandbox's view: {folder}")

    def write():
        # After each dataset: a check cut at the cell's time limit keeps
        # what it read.
        part = answer_path + ".part"
        with open(part, "w") as out:
            json.dump(answer, out, allow_nan=False, default=str)
        os.replace(part, answer_path)

    with tempfile.TemporaryDirectory() as scratch:
        os.symlink(folder, os.path.join(scratch, shown_as.rstrip("/")))
        os.chdir(scratch)
        try:
            for dataset in datasets:
                if time.monotonic() - started > seconds:
                    break
                try:
                    view = _one(dataset, folder)
                except Exception as exc:
                    view = {"error": _error(exc)}
                if view is not None:
                    answer[dataset["path"]] = view
                    write()
        finally:
            os.chdir(here)
    write()
