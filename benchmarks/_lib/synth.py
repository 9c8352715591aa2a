# Shared helpers for the GeoAnalystBench-derived suite's data generators.
#
# gisclaw runs this file as the first cell of every generator (see the
# `generator` list in each task.yaml), after a prelude that sets SEED and
# creates data/. Everything here is deterministic given SEED: the same seed
# gives the same bytes.

import datetime as _dt
import io as _io
import re as _re
import zipfile as _zipfile

import geopandas as gpd
import numpy as np
import pandas as pd
import rasterio
from rasterio.transform import from_origin
from scipy import ndimage
import shapely
import shapely.affinity
from shapely.geometry import LineString, Point, Polygon


def rng(offset=0):
    """A NumPy generator seeded from SEED (plus an offset for independent streams)."""
    return np.random.default_rng(SEED + offset)


def smooth_field(shape, r, sigma=12.0):
    """A smooth random surface in [0, 1]: Gaussian-filtered white noise."""
    f = ndimage.gaussian_filter(r.standard_normal(shape), sigma, mode="reflect")
    return (f - f.min()) / (f.max() - f.min())


def blob(shape, centre, radius):
    """A Gaussian bump in [0, 1] centred at (row, col)."""
    rows, cols = np.indices(shape)
    d2 = (rows - centre[0]) ** 2 + (cols - centre[1]) ** 2
    return np.exp(-d2 / (2.0 * radius**2))


def organic_polygon(cx, cy, radius, r, irregularity=0.25, n=48):
    """A star-shaped, irregular polygon (a city, a lake, a park)."""
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
    noise = ndimage.gaussian_filter1d(r.standard_normal(n), 3, mode="wrap")
    noise = noise / (np.abs(noise).max() + 1e-9)
    radii = radius * (1 + irregularity * noise)
    return Polygon(np.c_[cx + radii * np.cos(angles), cy + radii * np.sin(angles)])


def points_in(polygon, n, r):
    """n uniform random points inside a polygon (rejection sampling)."""
    minx, miny, maxx, maxy = polygon.bounds
    out = []
    while len(out) < n:
        xs = r.uniform(minx, maxx, n * 2)
        ys = r.uniform(miny, maxy, n * 2)
        inside = shapely.contains_xy(polygon, xs, ys)
        out.extend(zip(xs[inside], ys[inside]))
    return [Point(x, y) for x, y in out[:n]]


def voronoi_cells(polygon, n, r):
    """n irregular zones (block groups, parcels) tiling a polygon."""
    seeds = shapely.MultiPoint(points_in(polygon, n, r))
    cells = shapely.voronoi_polygons(seeds, extend_to=polygon.buffer(polygon.length))
    parts = [c.intersection(polygon) for c in cells.geoms]
    return [p for p in parts if not p.is_empty and p.area > 0]


def grid_cells(minx, miny, maxx, maxy, nx, ny):
    """A regular nx × ny grid of square-ish polygons, row-major from the top."""
    xs = np.linspace(minx, maxx, nx + 1)
    ys = np.linspace(maxy, miny, ny + 1)
    return [shapely.box(xs[i], ys[j + 1], xs[i + 1], ys[j]) for j in range(ny) for i in range(nx)]


def wiggly_line(p0, p1, r, n=12, wiggle=0.05):
    """A road or river from p0 to p1 with smooth random bends."""
    t = np.linspace(0, 1, n)
    x = p0[0] + (p1[0] - p0[0]) * t
    y = p0[1] + (p1[1] - p0[1]) * t
    length = np.hypot(p1[0] - p0[0], p1[1] - p0[1])
    bend = ndimage.gaussian_filter1d(r.standard_normal(n), 2) * wiggle * length
    bend[0] = bend[-1] = 0
    nx, ny = -(p1[1] - p0[1]) / length, (p1[0] - p0[0]) / length
    return LineString(np.c_[x + bend * nx, y + bend * ny])


def sample(array, transform, xs, ys):
    """Values of a raster array at map coordinates (nearest cell, clipped)."""
    inv = ~transform
    cols, rows = inv * (np.asarray(xs), np.asarray(ys))
    rows = np.clip(np.floor(rows).astype(int), 0, array.shape[0] - 1)
    cols = np.clip(np.floor(cols).astype(int), 0, array.shape[1] - 1)
    return array[rows, cols]


def write_raster(path, array, transform, crs, nodata=None, dtype=None):
    """Writes a (bands, rows, cols) or (rows, cols) array as a compressed GeoTIFF."""
    arr = np.asarray(array)
    if arr.ndim == 2:
        arr = arr[None]
    dtype = dtype or arr.dtype
    profile = dict(driver="GTiff", height=arr.shape[1], width=arr.shape[2], count=arr.shape[0],
                   dtype=dtype, crs=crs, transform=transform, compress="deflate")
    if nodata is not None:
        profile["nodata"] = nodata
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(arr.astype(dtype))


def save_xlsx(df, path):
    """Writes an .xlsx file whose bytes do not depend on the clock."""
    buf = _io.BytesIO()
    df.to_excel(buf, index=False)
    fixed = (2024, 1, 1, 0, 0, 0)
    with _zipfile.ZipFile(buf) as src, _zipfile.ZipFile(path, "w", _zipfile.ZIP_DEFLATED) as dst:
        for item in sorted(src.infolist(), key=lambda i: i.filename):
            data = src.read(item.filename)
            if item.filename == "docProps/core.xml":
                data = _re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"2024-01-01T00:00:00Z", data)
            dst.writestr(_zipfile.ZipInfo(item.filename, date_time=fixed), data, _zipfile.ZIP_DEFLATED)


