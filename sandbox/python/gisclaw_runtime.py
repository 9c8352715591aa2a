"""The Python half of the gisclaw sandbox worker.

The Rust worker (``sandbox/src``) embeds CPython, loads this module, calls
:func:`preload` once in the zygote, :func:`start_session` once in each forked
child, then :func:`run_cell`, :func:`variables` and :func:`packages` per
request. Every entry point returns JSON text matching the serde types in
``sandbox/protocol/src/messages.rs``.
"""

import ast
import builtins
import importlib.abc
import importlib.metadata
import io
import json
import linecache
import os
import platform
import re
import reprlib
import sys
import tempfile
import time
import traceback
import types

import gisclaw_native

# Modules imported once in the zygote, so sessions start warm.
STACK = [
    "numpy", "pandas", "shapely", "shapely.geometry", "pyproj", "geopandas",
    "pyogrio", "fiona", "rasterio", "rasterio.features", "rasterio.mask",
    "rasterio.warp", "rasterstats", "scipy", "scipy.interpolate",
    "scipy.ndimage", "scipy.spatial", "scipy.stats", "sklearn",
    "sklearn.ensemble", "sklearn.cluster", "sklearn.model_selection",
    "sklearn.metrics", "sklearn.preprocessing", "matplotlib",
    "matplotlib.pyplot", "seaborn", "xarray", "netCDF4", "h5netcdf",
    "networkx", "libpysal", "esda", "mgwr.gwr", "mgwr.sel_bw", "openpyxl",
]

# Names bound in every session namespace: alias -> module.
ALIASES = {
    "np": "numpy", "pd": "pandas", "gpd": "geopandas", "shapely": "shapely",
    "rasterio": "rasterio", "plt": "matplotlib.pyplot", "xr": "xarray",
    "nx": "networkx", "scipy": "scipy", "sklearn": "sklearn",
    "sns": "seaborn", "os": "os", "json": "json", "math": "math",
}

# The bookkeeping around a cell must not notice what the cell did to shared
# state: this module looks builtins up in its own copy (a cell may rebind
# `builtins.len`), and keeps its own references to library functions a cell
# could patch.
__builtins__ = dict(builtins.__dict__)
# What the interpreter's builtins were at start: the standard library this
# module calls (traceback, reprlib, json, io) looks builtins up in the real
# module, so a cell's `builtins.str = None` would break every later report.
# The entry points put these back while they work and give the cell its own
# changes again before the cell's code runs and when they return.
_PRISTINE_BUILTINS = dict(builtins.__dict__)
_BUILTINS_DICT = builtins.__dict__
_dumps = json.dumps
_ModuleType = types.ModuleType
_FunctionType = types.FunctionType
_BuiltinFunctionType = types.BuiltinFunctionType
_Bounded = gisclaw_native.Bounded

_preloaded = []
_failures = []
_import_seconds = 0.0
_session = None
_MISSING = object()


def _pristine_builtins(_live=_BUILTINS_DICT, _pristine=_PRISTINE_BUILTINS, _missing=_MISSING):
    """Puts back every builtin a cell rebound or deleted; returns what the
    cell had there (``_MISSING`` for a deleted name), for
    :func:`_cells_builtins`. Uses no builtin itself."""
    changed = {}
    for name, value in _pristine.items():
        current = _live.get(name, _missing)
        if current is not value:
            changed[name] = current
            _live[name] = value
    return changed


def _with_pristine_builtins(function, *args):
    """``function(*args)`` under the interpreter's own builtins, the cell's
    given back afterwards (an entry point's bookkeeping)."""
    changed = _pristine_builtins()
    try:
        return function(*args)
    finally:
        _cells_builtins(changed)


def _cells_builtins(changed, _live=_BUILTINS_DICT, _missing=_MISSING):
    """Gives the cell back the builtins it had changed (see
    :func:`_pristine_builtins`)."""
    for name, value in changed.items():
        if value is _missing:
            _live.pop(name, None)
        else:
            _live[name] = value


# ---------------------------------------------------------------- captures


class BoundedText(io.TextIOBase):
    """A text stream that keeps the first ``head`` and last ``tail`` characters.

    Memory stays bounded however much is written; the middle is counted and
    dropped. The buffer is native (``gisclaw_native.Bounded``, the worker's
    ``src/capture.rs``) and its ``write`` is bound on the instance, so a
    ``print`` costs no Python frame; this class adds what a text stream
    answers besides (``flush``, ``closed``, ``fileno`` raising
    ``io.UnsupportedOperation``).
    """

    def __init__(self, head, tail, live=0):
        super().__init__()
        self._buffer = _Bounded(head, tail, live)
        self.write = self._buffer.write

    def writable(self):
        return True

    def isatty(self):
        return False

    @property
    def encoding(self):
        return "utf-8"

    @property
    def total(self):
        return self._buffer.total

    def result(self):
        """``(text, dropped_chars)`` with a marker where the middle was cut."""
        return self._buffer.result()


# ---------------------------------------------------------- import blocker


class ImportBlocker(importlib.abc.MetaPathFinder):
    """Refuses imports of unavailable packages, naming the alternative.

    Sits first on ``sys.meta_path``, so ``import x``, ``__import__("x")`` and
    ``importlib.import_module("x")`` all meet it.
    """

    def __init__(self, blocked):
        self.blocked = dict(blocked)

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        alternative = self.blocked.get(top)
        if alternative is None:
            return None
        raise ModuleNotFoundError(
            f"'{top}' is not available in this sandbox (package constraint); "
            f"use {alternative} instead",
            name=fullname,
        )


_audited_blocks = {}


def _audit_blocked_imports(event, args):
    """An audit hook (which no cell can remove) that refuses blocked modules
    even when a cell took the finder off ``sys.meta_path``: ``import`` events
    by name, ``exec`` events of a module file named like a blocked package."""
    if event == "import":
        name = args[0]
    elif event == "exec":
        filename = getattr(args[0], "co_filename", "")
        if type(filename) is not str or not filename.endswith(".py"):
            return
        base = os.path.basename(filename)[:-3]
        name = os.path.basename(os.path.dirname(filename)) if base == "__init__" else base
    else:
        return
    if type(name) is not str:
        return
    top = name.partition(".")[0]
    alternative = _audited_blocks.get(top)
    if alternative is not None:
        raise ModuleNotFoundError(
            f"'{top}' is not available in this sandbox (package constraint); use {alternative} instead",
            name=top,
        )


_blocker = None


def install_import_blocker(blocked):
    """Put an :class:`ImportBlocker` first on the meta path and purge the
    blocked modules from ``sys.modules``."""
    global _blocker
    _blocker = ImportBlocker(blocked)
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, ImportBlocker)]
    sys.meta_path.insert(0, _blocker)
    if not _audited_blocks and blocked:
        sys.addaudithook(_audit_blocked_imports)
    _audited_blocks.clear()
    _audited_blocks.update(blocked)
    for name in list(sys.modules):
        if name.partition(".")[0] in blocked:
            del sys.modules[name]


def _restore_import_blocker():
    """Before each cell: the session's finder goes back first on the meta
    path if an earlier cell moved or removed it (a check, not a rebuild)."""
    if _blocker is None:
        return
    try:
        if not sys.meta_path or sys.meta_path[0] is not _blocker:
            sys.meta_path[:] = [f for f in sys.meta_path if f is not _blocker]
            sys.meta_path.insert(0, _blocker)
    except BaseException:  # a cell replaced sys.meta_path by something odd;
        pass  # the audit hook still refuses the blocked imports


# ------------------------------------------------------------- matplotlib


def _figure_facts(fig, path):
    """What a saved figure shows, for the output checks: how many axes,
    how many of them draw no data, and whether it has a legend or colorbar."""
    axes = [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>"]
    def draws(ax):
        return bool(ax.lines or ax.collections or ax.images or ax.patches
                    or any(t.get_text().strip() for t in ax.texts))
    legend = bool(fig.legends) or any(ax.get_legend() is not None for ax in axes)
    colorbar = len(fig.get_axes()) > len(axes)
    return {
        "path": _clean(os.path.abspath(path)),
        "axes": len(axes),
        "empty_axes": sum(1 for ax in axes if not draws(ax)),
        "legend": legend,
        "colorbar": colorbar,
    }


def _patch_matplotlib():
    """Make ``plt.show()`` save unsaved figures instead of blocking."""
    try:
        import matplotlib.figure
        import matplotlib.pyplot as plt
    except Exception:
        return
    original_savefig = matplotlib.figure.Figure.savefig

    def savefig(self, *args, **kwargs):
        self._gisclaw_saved = True
        result = original_savefig(self, *args, **kwargs)
        if _session is not None and args and isinstance(args[0], (str, os.PathLike)):
            try:
                _session.saved_figures.append(_figure_facts(self, os.fspath(args[0])))
            except Exception:
                pass  # facts are advisory; the figure is saved either way
        return result

    def show(*args, **kwargs):
        saved = []
        for num in plt.get_fignums():
            fig = plt.figure(num)
            if not getattr(fig, "_gisclaw_saved", False) and fig.get_axes():
                path = _free_figure_path()
                fig.savefig(path, dpi=150, bbox_inches="tight")
                saved.append(path)
            plt.close(fig)
        if _session is not None:
            _session.figures.extend(saved)
        where = ", ".join(saved) if saved else "nothing (no unsaved figure was open)"
        print(
            "gisclaw: plt.show() displays nothing in the sandbox; saved "
            f"{where}. Use plt.savefig('pred_results/NAME.png', dpi=150, "
            "bbox_inches='tight') to choose the file.",
            file=sys.stderr,
        )

    matplotlib.figure.Figure.savefig = savefig
    plt.show = show


# ---------------------------------------------------------------- joblib


def _patch_joblib():
    """Run joblib's process pools in the worker itself.

    loky and multiprocessing pools need POSIX semaphores and new processes,
    which the confined worker may not create (PermissionError). scikit-learn
    (``n_jobs=-1``) and esda (``G_Local``'s default) ask for them; with this
    patch they run sequentially instead of failing.
    """
    try:
        import joblib.parallel as jp
    except Exception:
        return

    class InProcessBackend(jp.SequentialBackend):
        supports_inner_max_num_threads = True

        def configure(self, n_jobs=1, parallel=None, **backend_args):
            return super().configure(n_jobs=1, parallel=parallel)

    for name in ("loky", "multiprocessing"):
        jp.register_parallel_backend(name, InProcessBackend)
    jp.DEFAULT_BACKEND = "loky"


def _free_figure_path():
    os.makedirs("pred_results", exist_ok=True)
    n = 1
    while os.path.exists(os.path.join("pred_results", f"figure_{n}.png")):
        n += 1
    return os.path.join("pred_results", f"figure_{n}.png")


# ------------------------------------------------------------ summaries

_repr = reprlib.Repr()
_repr.maxstring = 80
_repr.maxother = 80
_repr.maxlist = 6
_repr.maxdict = 6
_repr.maxtuple = 6
_repr.maxset = 6


# A CRS named by its EPSG code alone (`EPSG:32617`).
_EPSG_CODE = re.compile(r"(?i)epsg:[0-9]+")


def _crs_text(crs):
    if crs is None:
        return "no CRS"
    # pyproj keeps the text a CRS was made from: when that is an EPSG code
    # (as pyogrio reports most files' CRS), it is the answer, without
    # `to_epsg()`'s database lookup (~0.2 ms the first time in a session).
    srs = getattr(crs, "srs", None)
    if type(srs) is str and _EPSG_CODE.fullmatch(srs.strip()):
        return srs.strip().upper()
    try:
        epsg = crs.to_epsg()
        if epsg:
            return f"EPSG:{epsg}"
    except Exception:
        pass
    try:
        return crs.name if hasattr(crs, "name") else str(crs)[:60]
    except Exception:
        return str(crs)[:60]


def _columns_text(columns, limit=12):
    cols = [str(c) for c in columns]
    text = ", ".join(cols[:limit])
    if len(cols) > limit:
        text += f", … (+{len(cols) - limit})"
    return f"[{text}]"


def _columns_once(name_and_seen, columns):
    """`_columns_text`, or `as \`X\`` when the same list of four or more
    columns was already shown for variable X in this session (X_train and
    X_test after X): the earlier observation is still in the model's
    history, so nothing is lost and the list is not paid for twice."""
    text = _columns_text(columns)
    if name_and_seen is None or len(columns) < 4:
        return text
    name, seen = name_and_seen
    first = seen.setdefault(text, name)
    return text if first == name else f"as `{first}`"


def _array_text(arr):
    import numpy as np

    parts = [f"shape {tuple(arr.shape)}", f"dtype {arr.dtype}"]
    if arr.size and arr.dtype.kind in "biuf":
        if arr.dtype.kind == "f":
            nan_share = float(np.isnan(arr).mean())
            finite = arr[np.isfinite(arr)] if nan_share else arr
            if finite.size:
                parts.append(f"min {finite.min():.6g}, max {finite.max():.6g}")
            parts.append(f"NaN {nan_share:.1%}")
        else:
            parts.append(f"min {arr.min()}, max {arr.max()}")
    return ", ".join(parts)


def _safe_text(fn, *args):
    """``fn(*args)`` as text, or a note saying why it failed; never raises,
    whatever ``fn`` (a user object's ``__str__`` or ``__repr__``) does."""
    try:
        text = fn(*args)
        if type(text) is not str:
            text = str.__str__(text) if isinstance(text, str) else f"<{type(text).__name__}>"
        return text
    except BaseException as exc:  # a hostile object must not break the report
        try:
            why = type(exc).__name__
        except BaseException:
            why = "error"
        return f"<unprintable: {why}>"


def _kind_of(value):
    """The type's short name, even for objects that lie about their class."""
    try:
        return str(type(value).__name__)
    except BaseException:
        return "object"


# Memory addresses in default reprs (`<… object at 0x7f…>`): noise to the
# model, and they make the same run's observations differ from run to run.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def summarize(value, name_and_seen=None):
    """``(kind, one-line summary)`` of any value, without memory
    addresses; never raises. With ``(name, seen)``, a frame's column list
    already shown for another variable is named, not repeated
    (``_columns_once``)."""
    kind = _kind_of(value)
    try:
        return kind, _ADDRESS.sub("", str(_summary(value, name_and_seen)))
    except BaseException as exc:  # a summary must never break a cell
        return kind, f"<no summary: {_kind_of(exc)}: {_safe_text(str, exc)}>"


def _summary(value, name_and_seen):
    mod = type(value).__module__ or ""
    kind = type(value).__name__
    if mod.startswith("geopandas") and kind == "GeoDataFrame":
        # The geometry column once: each `.geometry` (and `.crs`, which
        # goes through it) builds a new GeoSeries, ~12 µs.
        geometries = value.geometry.values
        geom = _geometry_types(geometries)
        return (f"{len(value)} rows, {_crs_text(geometries.crs)}, geometry {'/'.join(geom[:3]) or 'none'}, "
                f"columns: {_columns_once(name_and_seen, value.columns)}")
    if mod.startswith("geopandas") and kind == "GeoSeries":
        geometries = value.values
        geom = _geometry_types(geometries)
        return f"{len(value)} geometries, {_crs_text(geometries.crs)}, {'/'.join(geom[:3]) or 'empty'}"
    if mod.startswith("pandas") and kind == "DataFrame":
        cols = [f"{c}:{t}" for c, t in zip(value.columns, value.dtypes)]
        return f"{value.shape[0]} rows × {value.shape[1]} columns: {_columns_once(name_and_seen, cols)}"
    if mod.startswith("pandas") and kind == "Series":
        text = f"{len(value)} values, dtype {value.dtype}, name {value.name!r}"
        if value.dtype.kind in "biuf" and len(value):
            text += f", min {value.min():.6g}, max {value.max():.6g}"
        return text
    if mod == "numpy" and kind == "ndarray":
        return _array_text(value)
    if mod.startswith("rasterio") and hasattr(value, "count") and hasattr(value, "width"):
        state = "closed" if getattr(value, "closed", False) else "open"
        return (f"raster {getattr(value, 'name', '?')} ({state}), {value.width}×{value.height}, "
                f"{value.count} band(s), {value.dtypes[0]}, {_crs_text(value.crs)}, nodata {value.nodata}")
    if mod.startswith("xarray") and kind == "DataArray":
        dims = ", ".join(f"{d}={n}" for d, n in value.sizes.items())
        return f"DataArray {value.name!r} ({dims}), dtype {value.dtype}"
    if mod.startswith("xarray") and kind == "Dataset":
        dims = ", ".join(f"{d}={n}" for d, n in value.sizes.items())
        return f"Dataset ({dims}), variables: {_columns_text(value.data_vars)}"
    if mod.startswith("shapely"):
        return f"{value.geom_type}, bounds {tuple(round(b, 6) for b in value.bounds)}"
    if mod.startswith("matplotlib") and kind == "Figure":
        return f"figure with {len(value.get_axes())} axes"
    if mod == "numpy" and getattr(value, "shape", None) == () and hasattr(value, "item"):
        # A numpy scalar: its value as Python writes it (the kind already
        # says float64); numpy 2's repr wraps it in `np.float64(…)`.
        return repr(value.item())
    if isinstance(value, (bool, int, float, complex)) or value is None:
        return repr(value)
    if isinstance(value, str):
        return f"str of {len(value)} chars: {_repr.repr(value)}"
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return f"{len(value)} items: {_repr.repr(value)}"
    if isinstance(value, types.FunctionType):
        import inspect

        return f"function{inspect.signature(value)}"
    if isinstance(value, type):
        return f"class {value.__qualname__}"
    return _repr.repr(value)


# shapely's geometry type ids, in order.
_GEOMETRY_TYPES = ("Point", "LineString", "LinearRing", "Polygon", "MultiPoint",
                   "MultiLineString", "MultiPolygon", "GeometryCollection")


def _geometry_types(geometries):
    """The geometry types of a GeoSeries' values, most common first (ties
    in shapely's type order), missing geometries left out. One vectorised
    pass: pandas' ``geom_type.value_counts()`` took ~0.3 ms (~1 ms the first
    time in a session) for a one-row frame."""
    import numpy as np
    import shapely

    # A GeoSeries' GeometryArray gives its ndarray directly; through the
    # Series, pandas' conversion took 85-175 µs the first time in a session.
    ids = shapely.get_type_id(np.asarray(getattr(geometries, "array", geometries)))
    counts = np.bincount(ids[ids >= 0], minlength=len(_GEOMETRY_TYPES))
    order = sorted(range(len(_GEOMETRY_TYPES)), key=lambda i: -counts[i])
    return [_GEOMETRY_TYPES[i] for i in order if counts[i]]


def _warm_up_summaries():
    """Summarise one small value of each common kind, in the zygote, so that
    the first cell of every session does not pay the libraries' first-call
    set-up (pandas' dtype machinery, shapely's vectorised calls: ~1-2 ms in
    a session's first observation). No CRS: the PROJ database is not opened
    before the fork."""
    try:
        import geopandas
        import numpy as np
        import pandas as pd
        import shapely

        frame = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
        layer = geopandas.GeoDataFrame(frame, geometry=[shapely.Point(0, 0), shapely.Point(1, 1)])
        for value in (frame, frame["a"], layer, layer.geometry, np.arange(4.0)):
            summarize(value, ("_warm_up", {}))
            _fingerprint(value)
    except BaseException:
        pass  # a warm-up only saves time


def _fingerprint(value):
    """Cheap identity of a value, to tell changed variables from unchanged.
    Never raises: an object whose attributes raise is known by its id."""
    key = (id(value), type(value))
    try:
        shape = getattr(value, "shape", None)
        if type(shape) is tuple:
            key += (shape,)
        columns = getattr(value, "columns", None)
        if columns is not None:
            key += (tuple(map(str, columns)),)
    except BaseException:
        pass
    kind = type(value)
    if kind is bool or kind is int or kind is float or kind is str or kind is bytes or value is None:
        key += (value,)
    elif kind is list or kind is dict or kind is set:
        key += (len(value),)
    return key


def _user_names(ns, library=None):
    """Names the user made: no private names, modules, or functions and
    classes imported from libraries. Takes a copy of the items first, and
    skips what cannot be classified without running user code.

    ``library`` (a dict) remembers the names found to be libraries' with
    their values, so that a name still bound to the same object is skipped
    without being classified again (most of a namespace, every cell)."""
    for name, value in list(dict.items(ns)):
        if type(name) is not str or name.startswith("_"):
            continue
        if library is not None and library.get(name, _MISSING) is value:
            continue
        kind = type(value)
        if _issubclass_safe(kind, _ModuleType):
            if library is not None:
                library[name] = value
            continue
        if _issubclass_safe(kind, (type, _FunctionType, _BuiltinFunctionType)):
            try:
                if getattr(value, "__module__", None) != "__main__":
                    if library is not None:
                        library[name] = value
                    continue
            except BaseException:
                pass
        yield name, value


def _issubclass_safe(kind, bases):
    try:
        return issubclass(kind, bases)
    except BaseException:
        return False


# ---------------------------------------------------------------- errors


def _is_user_frame(frame):
    return frame.filename.startswith("<cell-")


def _is_runtime_frame(frame):
    return frame.filename in (__file__, "gisclaw_runtime.py")


def format_error(exc, budget):
    """Traceback with the user's frames kept, library frames collapsed, and the
    exception line always present; cut to ``budget`` characters from the
    middle of the frames, never the exception line. Never raises: an
    exception whose ``__str__`` raises is named by its type."""
    try:
        return _format_error(exc, budget)
    except BaseException:
        return f"{_kind_of(exc)}: {_safe_text(str, exc)}\n"


def _format_error(exc, budget):
    """Traceback with the user's frames kept, library frames collapsed, and the
    exception line always present; cut to ``budget`` characters from the
    middle of the frames, never the exception line."""
    te = traceback.TracebackException.from_exception(exc)
    frames = list(te.stack)
    lines = []
    skipped = []

    def flush_skipped():
        if skipped:
            places = sorted({os.path.basename(os.path.dirname(f.filename)) or f.filename for f in skipped})
            lines.append(f"  [{len(skipped)} library frame(s) in {', '.join(places[:4])}]\n")
            skipped.clear()

    for frame in frames:
        if _is_runtime_frame(frame):
            continue
        if _is_user_frame(frame):
            flush_skipped()
            lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}\n')
            if frame.line:
                lines.append(f"    {frame.line.strip()}\n")
        else:
            skipped.append(frame)
    flush_skipped()
    exc_lines = "".join(te.format_exception_only())
    head = "Traceback (most recent call last):\n" if lines else ""
    body = "".join(lines)
    room = budget - len(head) - len(exc_lines)
    if len(body) > room:
        keep = max(room, 0)
        first = body[: keep // 3]
        last = body[len(body) - (keep - len(first)):] if keep > len(first) else ""
        body = f"{first}  [... frames cut ...]\n{last}"
    return head + body + exc_lines


# ---------------------------------------------------------------- session


class Session:
    """The state of one forked session child."""

    def __init__(self, spec):
        limits = spec["limits"]
        self.limits = limits
        self.figures = []
        self.saved_figures = []
        # Column lists already shown in an observation → the variable they
        # were shown for (see `_columns_once`).
        self.shown_columns = {}
        self.namespace = {"__name__": "__main__", "__builtins__": builtins}
        # The user variables' fingerprints when the last cell ended: what
        # the next cell's changes are told against (nothing else runs in
        # the namespace between cells).
        self.fingerprints = {}
        # Names bound to libraries' modules, functions and classes (see
        # `_user_names`).
        self.library = {}
        for alias, module in ALIASES.items():
            if module in sys.modules:
                self.namespace[alias] = sys.modules[module]
        import gisclaw_tools

        for name in gisclaw_tools.__all__:
            self.namespace[name] = getattr(gisclaw_tools, name)
        self.namespace["gisclaw_tools"] = gisclaw_tools


def _gdal_versions():
    """The GDAL each pre-imported library carries (wheels bundle their own)."""
    found = {}
    for name, attribute in (("rasterio", "__gdal_version__"), ("pyogrio", "__gdal_version__"),
                            ("fiona", "__gdal_version__"), ("osgeo.gdal", "__version__")):
        module = sys.modules.get(name)
        version = getattr(module, attribute, None) if module is not None else None
        if isinstance(version, str):
            found[name.split(".")[0]] = version
    return found


def worker_info():
    """JSON: interpreter, pre-imported modules, failures, packages."""
    return json.dumps({
        "python_version": platform.python_version(),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "preloaded": _preloaded,
        "import_failures": _failures,
        "import_seconds": round(_import_seconds, 3),
        "packages": _package_list(),
        "gdal": _gdal_versions(),
        "landlock_abi": None,
        "seccomp": False,
    })


def preload():
    """Import the GIS stack (in the zygote, once) and patch matplotlib."""
    global _import_seconds
    start = time.perf_counter()
    for name in STACK:
        try:
            importlib.import_module(name)
            _preloaded.append(name)
        except BaseException as exc:  # a broken wheel must not stop the worker
            line = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
            _failures.append({"module": name, "error": line[:300]})
    _patch_matplotlib()
    _patch_joblib()
    _import_seconds = time.perf_counter() - start
    _warm_up_summaries()


def start_session(spec_json):
    """Turn this (forked) interpreter into a session."""
    global _session
    spec = json.loads(spec_json)
    tmpdir = spec["tmpdir"]
    for var in ("TMPDIR", "TEMP", "TMP", "HOME"):
        os.environ[var] = tmpdir
    tempfile.tempdir = tmpdir
    install_import_blocker({b["module"]: b["alternative"] for b in spec["blocked_imports"]})
    _session = Session(spec)
    _warm_up_session()
    return json.dumps(None)


def _warm_up_session():
    """Run the bookkeeping around a cell once on an empty cell, and the
    summaries once more, before the session is ready: a forked session's
    first writes copy the pages they touch (reference counts are writes),
    and that is better paid while the agent is still writing the data card
    than in the first observations. Measured: a session's first summary of
    a frame, a layer or an array took 340-560 µs against 150-190 µs after,
    and ~0.3 ms more went to the first cell's bookkeeping."""
    run_cell("pass", 0)
    linecache.cache.pop("<cell-0>", None)
    _warm_up_summaries()


def _split_last_expression(code, filename):
    """Compile ``code``; when it ends in an expression, compile that part
    separately so its value can be shown (as a notebook would)."""
    tree = ast.parse(code, filename=filename, mode="exec")
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        return compile(tree, filename, "exec"), compile(last, filename, "eval")
    return compile(tree, filename, "exec"), None


def _ran_before(code, filename, exc):
    """The source of the cell's top-level statements that ran to their end
    before the one that raised ``exc`` (whole lines), or None: none did,
    the cell did not parse, or the raise is not placed in the cell. Their
    effects (names, files) are in the session, so the journal keeps them."""
    try:
        line = None
        tb = exc.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_filename == filename and frame.f_code.co_name == "<module>":
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None:
            return None
        body = ast.parse(code, filename=filename, mode="exec").body
        ran = [node for node in body if node.end_lineno < line]
        if not ran or len(ran) == len(body):
            return None
        lines = code.splitlines(True)
        return "".join(lines[: ran[-1].end_lineno]).rstrip() + "\n"
    except BaseException:
        return None


def _clean(text):
    """``text`` as valid UTF-8: lone surrogates (from ``print('\\ud800')`` or a
    non-UTF-8 file name) become U+FFFD instead of breaking the report."""
    if type(text) is not str:
        text = _safe_text(str, text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _report(value):
    """JSON text of a report whose strings are already clean."""
    return _dumps(value, ensure_ascii=False)


def _error_of(exc, budget):
    """The ``error`` object of a cell that raised ``exc``."""
    if _isinstance_safe(exc, SystemExit):
        code = _safe_text(str, getattr(exc, "code", None))
        return {
            "ename": "SystemExit",
            "evalue": _clean(code),
            "traceback": _clean(f"SystemExit: {code} (exit() ends nothing here: the session continues)\n"),
        }
    return {
        "ename": _clean(_kind_of(exc)),
        "evalue": _clean(_safe_text(str, exc)),
        "traceback": _clean(format_error(exc, budget)),
    }


def _isinstance_safe(value, kind):
    return _issubclass_safe(type(value), kind)


def _changes(ns, before, limits, library):
    """The fingerprints of every user variable, and summaries of those a
    cell created or changed (against ``before``, the fingerprints when the
    previous cell ended)."""
    current = {}
    changed = []
    for name, value in _user_names(ns, library):
        fp = _fingerprint(value)
        current[name] = fp
        if name not in before:
            changed.append((name, value, "new"))
            continue
        try:
            same = before[name] == fp
        except BaseException:  # a value whose __eq__ raises
            same = False
        if not same:
            changed.append((name, value, "changed"))
    changes = []
    for name, value, change in changed[: limits["max_variables"]]:
        seen = (name, _session.shown_columns) if _session is not None else None
        kind, summary = summarize(value, seen)
        changes.append({
            "name": _clean(name[: limits["summary_chars"]]),
            "kind": _clean(kind),
            "summary": _clean(summary[: limits["summary_chars"]]),
            "change": change,
        })
    return current, changes


def run_cell(code, cell):
    """Run one cell in the session namespace; JSON ``CellResult``.

    The bookkeeping runs under the interpreter's own builtins (see
    :func:`_pristine_builtins`), the cell's code under the ones it set.

    Everything around the user's code uses the references saved at start-up
    and guards each call into user objects, so no cell can make this fail."""
    changed = _pristine_builtins()
    try:
        return _run_cell(code, cell, changed)
    finally:
        _cells_builtins(changed)


def _run_cell(code, cell, changed):
    """:func:`run_cell` under the pristine builtins; ``changed`` holds the
    cell's own builtins, given back while its code runs and updated after."""
    session = _session
    limits = session.limits
    filename = f"<cell-{cell}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    _restore_import_blocker()
    # 1 and 2: their writes are also sent to the agent while the cell runs.
    out = BoundedText(limits["stdout_head_chars"], limits["stdout_tail_chars"], 1)
    err = BoundedText(limits["stderr_chars"] * 3 // 4, limits["stderr_chars"] // 4, 2)
    ns = session.namespace
    session.figures = []
    session.saved_figures = []
    error = None
    ran_before = None
    display = None
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    start = time.perf_counter()
    try:
        body, last = _split_last_expression(code, filename)
        _cells_builtins(changed)
        try:
            exec(body, ns)
            if last is not None:
                value = eval(last, ns)
                if value is not None:
                    ns["_"] = value
                    display = repr(value)
        finally:
            changed.clear()
            changed.update(_pristine_builtins())
        if display is not None:
            out.write(display + "\n")
    except BaseException as exc:
        error = _error_of(exc, limits["traceback_chars"])
        ran_before = _ran_before(code, filename, exc)
    finally:
        elapsed = time.perf_counter() - start
        sys.stdout, sys.stderr = old_out, old_err
    try:
        session.fingerprints, changes = _changes(ns, session.fingerprints, limits, session.library)
    except BaseException as exc:
        changes = [{
            "name": "(variables)",
            "kind": "note",
            "summary": _clean(f"the variables could not be summarised: {_kind_of(exc)}: {_safe_text(str, exc)}"),
            "change": "changed",
        }]
    stdout, dropped = out.result()
    stderr, _ = err.result()
    return _report({
        "ok": error is None,
        "stdout": _clean(stdout),
        "stdout_dropped_chars": dropped,
        "stderr": _clean(stderr),
        "error": error,
        "display": None if display is None else _clean(display[: limits["stdout_tail_chars"]]),
        "variables": changes,
        "figures": [_clean(f) for f in session.figures if type(f) is str],
        "saved_figures": session.saved_figures,
        "duration_us": int(elapsed * 1_000_000),
        "ran_before_error": None if ran_before is None else _clean(ran_before),
    })


def analyse(code):
    """:func:`_analyse` under the interpreter's own builtins."""
    return _with_pristine_builtins(_analyse, code)


def _analyse(code):
    """JSON list of the static findings of ``code`` against the namespace.
    Advisory: an analyser failure is no finding, never an error."""
    import gisclaw_analysis

    try:
        findings = gisclaw_analysis.analyse(code, _session.namespace, dict(_audited_blocks), os.getcwd())
    except Exception:
        findings = []
    for f in findings:
        f["message"] = _clean(f["message"])[:500]
    return json.dumps(findings)


def shape(code):
    """:func:`_shape` under the interpreter's own builtins."""
    return _with_pristine_builtins(_shape, code)


def _shape(code):
    """JSON: the SHA-256 of ``ast.dump`` of ``code`` (no positions, so
    layout, comments and quoting do not count), or null when it does not
    parse. Parsing runs nothing of the cell."""
    import ast
    import hashlib

    try:
        dump = ast.dump(ast.parse(code, filename="<cell>", mode="exec"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "null"
    return json.dumps(hashlib.sha256(dump.encode("utf-8", "surrogatepass")).hexdigest())


def variables():
    """:func:`_variables` under the interpreter's own builtins."""
    return _with_pristine_builtins(_variables)


def _variables():
    """JSON list of summaries of every user variable."""
    limit = _session.limits["summary_chars"]
    result = []
    for name, value in sorted(_user_names(_session.namespace, _session.library), key=lambda item: item[0]):
        kind, summary = summarize(value)
        result.append({"name": _clean(name), "kind": _clean(kind), "summary": _clean(summary[:limit]), "change": "listed"})
    return _report(result)


def _package_list():
    seen = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower() not in seen:
            seen[name.lower()] = {"name": name, "version": dist.version}
    return sorted(seen.values(), key=lambda p: p["name"].lower())


def packages():
    """:func:`_packages` under the interpreter's own builtins."""
    return _with_pristine_builtins(_packages)


def _packages():
    """JSON list of importable distributions with versions."""
    return json.dumps(_package_list())


# ---------------------------------------------------------------- answers


def encode_answer(value):
    """A Python value as ``{"kind": K, "value": V}`` with plain-JSON ``V``,
    for the typed judges of ``src/bench/judge.rs``. Kinds: number, string,
    bool, list, dict, geometry (GeoJSON), array (shape + flat data, NaN as
    null), none, other (its repr)."""
    kind, plain = _encode(value)
    return {"kind": kind, "value": plain}


def _finite_or_none(x):
    """JSON has no NaN or infinity: they become null."""
    return x if x == x and abs(x) != float("inf") else None


def _encode(value):
    import numbers

    np = sys.modules.get("numpy")
    if value is None:
        return "none", None
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return "bool", bool(value)
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        return "number", _finite_or_none(float(value))
    if isinstance(value, str):
        return "string", value
    if hasattr(value, "__geo_interface__") and hasattr(value, "geom_type"):
        return "geometry", json.loads(json.dumps(value.__geo_interface__))
    if np is not None and isinstance(value, np.ndarray):
        data = np.asarray(value)
        if data.dtype == bool:
            data = data.astype("uint8")
        flat = data.astype("float64").ravel()
        return "array", {
            "shape": list(data.shape),
            "data": [_finite_or_none(x) for x in flat.tolist()],
        }
    if isinstance(value, dict):
        return "dict", {str(k): _encode(v)[1] for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        # Sets have no order (string hashing varies per process): sort, so
        # that the same set is always written the same way.
        items = [_encode(v)[1] for v in value]
        return "list", sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return "list", [_encode(v)[1] for v in value]
    if hasattr(value, "to_wkt") and hasattr(value, "to_epsg"):  # a pyproj CRS
        return "string", value.to_string()
    return "other", repr(value)[:500]


def write_answer(thunk, path):
    """Calls ``thunk()`` and writes its encoded result (or the exception it
    raised, as kind ``error``) to ``path`` as JSON."""
    try:
        answer = encode_answer(thunk())
    except Exception as exc:  # the judged code's failure is the answer
        answer = {"kind": "error", "value": {"ename": type(exc).__name__, "evalue": str(exc)[:500]}}
    with open(path, "w") as out:
        json.dump(answer, out, allow_nan=False)


def run_case(code, entry, setup, params_json, path):
    """One function-level test: runs ``setup`` (its names that match the
    function's parameters become arguments; a failing setup raises), then
    ``code`` in a fresh namespace, calls ``entry`` with the arguments (the
    JSON ``params`` win over setup names) and writes the answer to ``path``.
    A failure of ``code`` or of the call is the answer (kind ``error``)."""
    import inspect

    prepared = {"__name__": "gisclaw_case_setup"}
    exec(compile(setup, "<case setup>", "exec"), prepared)

    def call():
        namespace = {"__name__": "gisclaw_case"}
        exec(compile(code, "<solution>", "exec"), namespace)
        function = namespace[entry]
        names = inspect.signature(function).parameters
        args = {k: v for k, v in prepared.items() if k in names}
        args.update(json.loads(params_json))
        return function(**args)

    write_answer(call, path)


def evaluate_check(expression, namespace_globals, path):
    """Evaluates a step check expression in the session namespace and writes
    the answer to ``path``."""
    write_answer(lambda: eval(compile(expression, "<check>", "eval"), namespace_globals), path)
