"""Helpers pre-loaded into every gisclaw sandbox session.

They exist because the raw library APIs trip agents up in known ways (see the
GISclaw paper, Table 11): ``rasterio.open`` returns a reader object, not
pixels; a 2-D array for a one-band raster is mistaken for band-indexed data;
nested folders hide files; numbers arrive as strings; a city-wide grid at a
fine cell size does not fit in memory.
"""

import os

__all__ = [
    "load_raster",
    "save_raster",
    "list_files",
    "to_numeric_columns",
    "grid_template",
    "auto_numeric",
]


def load_raster(path, masked=False):
    """Read a raster into ``(data, meta)``.

    ``data`` is always a 3-D ndarray ``(bands, height, width)`` — band ``b``
    (1-based in GDAL) is ``data[b - 1]`` even for a single-band file. ``meta``
    is a dict with ``crs``, ``transform``, ``nodata``, ``width``, ``height``,
    ``count``, ``dtype``, ``bounds``, ``res`` and ``profile`` (for writing).
    With ``masked=True`` nodata cells become NaN (the array is float).
    """
    import numpy as np
    import rasterio

    with rasterio.open(path) as src:
        data = src.read()
        meta = {
            "crs": src.crs,
            "transform": src.transform,
            "nodata": src.nodata,
            "width": src.width,
            "height": src.height,
            "count": src.count,
            "dtype": src.dtypes[0],
            "bounds": src.bounds,
            "res": src.res,
            "profile": src.profile.copy(),
        }
    if masked and meta["nodata"] is not None:
        data = data.astype("float64")
        data[data == meta["nodata"]] = np.nan
    return data, meta


def save_raster(path, data, meta=None, crs=None, transform=None, nodata=None):
    """Write ``data`` (2-D or ``(bands, H, W)``) as a GeoTIFF.

    Georeferencing comes from ``meta`` (as returned by :func:`load_raster`)
    unless ``crs``/``transform``/``nodata`` are given. Parent folders are
    created. Returns the path.
    """
    import numpy as np
    import rasterio

    arr = np.asarray(data)
    if arr.ndim == 2:
        arr = arr[np.newaxis, ...]
    if arr.ndim != 3:
        raise ValueError(f"save_raster needs a 2-D or 3-D array, got shape {arr.shape}")
    meta = meta or {}
    profile = {
        "driver": "GTiff",
        "height": arr.shape[1],
        "width": arr.shape[2],
        "count": arr.shape[0],
        "dtype": str(arr.dtype) if arr.dtype != np.bool_ else "uint8",
        "crs": crs if crs is not None else meta.get("crs"),
        "transform": transform if transform is not None else meta.get("transform"),
        "nodata": nodata if nodata is not None else meta.get("nodata"),
    }
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(arr.astype(profile["dtype"]))
    return path


def list_files(root="."):
    """Every file under ``root`` (nested folders flattened), with sizes.

    Returns a sorted list of ``(relative_path, bytes)``; names keep their
    exact case.
    """
    found = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            full = os.path.join(folder, name)
            found.append((os.path.relpath(full, root), os.path.getsize(full)))
    return sorted(found)


def to_numeric_columns(df, columns=None, keep_codes=False):
    """Convert string-encoded numeric columns to numbers in place.

    Only columns whose non-null values all parse are converted; with
    ``keep_codes``, columns of codes written with leading zeros
    (``"01001"``) stay text. Returns the list of converted column names.
    """
    import pandas as pd

    converted = []
    for col in columns if columns is not None else list(df.columns):
        series = df[col]
        # Text columns: `object` (pandas < 3) or the string dtype (pandas 3).
        if not (series.dtype == object or pd.api.types.is_string_dtype(series.dtype)):
            continue
        if keep_codes and _is_code(series):
            continue
        parsed = pd.to_numeric(series, errors="coerce")
        if parsed.notna().sum() == series.notna().sum() and series.notna().any():
            df[col] = parsed
            converted.append(col)
    return converted


def grid_template(bounds, cell_size, max_cells=1_000_000):
    """A regular grid over ``bounds`` ``(minx, miny, maxx, maxy)``.

    The cell size is ``cell_size`` unless the grid would hold more than
    ``max_cells`` cells; then it is coarsened (the smallest size that fits).
    Returns a dict: ``xs`` and ``ys`` (cell centres, ``ys`` from north to
    south, as raster rows run), ``width``, ``height``, ``cell_size`` (the
    one used), ``coarsened`` (whether it was) and ``transform`` (an
    ``affine.Affine`` for rasterio).
    """
    import math

    import numpy as np
    from affine import Affine

    minx, miny, maxx, maxy = (float(b) for b in bounds)
    if not (maxx > minx and maxy > miny):
        raise ValueError(f"grid_template needs minx < maxx and miny < maxy, got {bounds!r}")
    if not cell_size > 0 or not max_cells >= 1:
        raise ValueError("grid_template needs cell_size > 0 and max_cells >= 1")
    def shape(size):
        return max(1, math.ceil((maxx - minx) / size)), max(1, math.ceil((maxy - miny) / size))

    size = float(cell_size)
    area = (maxx - minx) * (maxy - miny)
    if area / (size * size) > max_cells:
        size = math.sqrt(area / max_cells)
    width, height = shape(size)
    # Ceilings can still overshoot by a row or a column: grow until it fits.
    while width * height > max_cells:
        size *= 1.001
        width, height = shape(size)
    xs = minx + size * (np.arange(width) + 0.5)
    ys = maxy - size * (np.arange(height) + 0.5)
    return {
        "xs": xs,
        "ys": ys,
        "width": width,
        "height": height,
        "cell_size": size,
        "coarsened": size != float(cell_size),
        "transform": Affine(size, 0.0, minx, 0.0, -size, maxy),
    }


def _is_code(series):
    """Whether a text column holds codes written with leading zeros
    (``"01001"``, ``"007"``): they stay text when cast automatically."""
    text = series.dropna().astype(str).str.strip()
    return bool(text.str.match(r"^[+-]?0[0-9]").any())


def _cast_numeric_text(df):
    """Casts ``df``'s text columns whose values all parse as numbers, except
    codes with leading zeros; returns ``df`` (anything else unchanged)."""
    import pandas as pd

    if isinstance(df, pd.DataFrame):
        to_numeric_columns(df, keep_codes=True)
    return df


_READERS = (("pandas", "read_csv"), ("pandas", "read_excel"), ("pandas", "read_table"), ("geopandas", "read_file"))


def auto_numeric(on=True):
    """Cast numbers read as text automatically (the GISclaw paper's tool
    layer, Table 11): while on, ``pd.read_csv``, ``pd.read_excel``,
    ``pd.read_table`` and ``gpd.read_file`` return frames whose text columns
    holding only numbers are numeric (codes with leading zeros such as
    ``"01001"`` stay text, and a call giving ``dtype`` or ``converters``
    keeps its types). ``auto_numeric(False)`` restores the readers.
    Returns the readers it wraps.
    """
    import importlib

    wrapped = []
    for module_name, name in _READERS:
        module = importlib.import_module(module_name)
        current = getattr(module, name)
        original = getattr(current, "__gisclaw_original__", current)
        if not on:
            setattr(module, name, original)
            continue

        def reader(*args, __original=original, **kwargs):
            frame = __original(*args, **kwargs)
            # Types the caller asked for are kept.
            if "dtype" in kwargs or "converters" in kwargs:
                return frame
            return _cast_numeric_text(frame)

        reader.__gisclaw_original__ = original
        reader.__doc__ = original.__doc__
        reader.__name__ = name
        setattr(module, name, reader)
        wrapped.append(f"{module_name}.{name}")
    return wrapped
