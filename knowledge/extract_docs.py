"""Extract the API documentation of installed Python modules as JSON lines.

Run with the sandbox venv's interpreter by ``gisclaw knowledge build``:

    python extract_docs.py MODULE [MODULE ...]  > docs.jsonl

Each public object is documented once:

- under its canonical public path: the module that defines it when that
  module is listed (``rasterio.io.DatasetReader``), else the shortest dotted
  path (fewest parts, then fewest characters) at which the listed modules
  export it (``geopandas.GeoSeries``), where a module's public names are its
  ``__all__`` when it has one; every other path it is exported at is kept
  as an alias (``rasterio.CRS`` and ``rasterio.warp.CRS`` of
  ``rasterio.crs.CRS``);
- a class's members on the class that defines them: an inherited method is
  one entry on its defining class when that class is itself exported from
  a public module, else on the exporting public class with the shortest
  path (``rasterio.io.DatasetReader.read``, defined by a base in
  ``rasterio._io``), and the paths through every
  other exporting class are its aliases (``libpysal.weights.Queen.from_sparse``
  finds ``libpysal.weights.W.from_sparse``);
- two entries with the same last name and the same docstring (pyplot's
  wrappers of ``Axes`` methods) are one, the other a further alias.

Objects of other packages re-exported by a module are skipped (they are
documented under their own package when it is listed). A decorator that
hid its function's docstring (no ``functools.wraps``) is looked through.
Docstrings are kept whole up to DOC_CHARS. A module that does not import is
reported on stderr and skipped. The output is sorted by name so that the
same environment always gives the same file.
"""

import importlib
import inspect
import json
import sys
import warnings

DOC_CHARS = 12000
METHODS_PER_CLASS = 400
ALIASES_KEPT = 12


def signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def unwrapped(obj, name):
    """The function a docstring-less decorator wrapped (found in its closure)."""
    func = getattr(obj, "fget", obj)
    func = getattr(func, "__func__", func)
    for cell in getattr(func, "__closure__", None) or ():
        try:
            inner = cell.cell_contents
        except ValueError:
            continue
        if callable(inner) and getattr(inner, "__name__", None) == name and inner is not func:
            return inner
    return None


def doc_of(obj, name):
    text = inspect.getdoc(obj) or ""
    if not text:
        inner = unwrapped(obj, name)
        if inner is not None:
            text = inspect.getdoc(inner) or ""
    return text[:DOC_CHARS]


def signature_of(obj, name):
    sig = signature(obj)
    if sig in ("", "(*args, **kwargs)"):
        inner = unwrapped(obj, name)
        if inner is not None:
            sig = signature(inner) or sig
    return sig


def public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return sorted(set(n for n in names if isinstance(n, str) and not n.startswith("_")))


def owner_module(obj):
    if inspect.ismethod(obj):
        obj = obj.__func__
    return getattr(obj, "__module__", None) or ""


def belongs(obj, package):
    owner = owner_module(obj)
    return owner == package or owner.startswith(package + ".")


def is_routine(obj):
    return (
        inspect.isfunction(obj)
        or inspect.isbuiltin(obj)
        or inspect.ismethod(obj)
        or inspect.isroutine(obj)
        or type(obj).__name__ in ("ufunc", "cython_function_or_method", "_ArrayFunctionDispatcher")
    )


def private(cls):
    """A class of a private module (``rasterio._io.DatasetReaderBase``) or a
    mixin or base by its name (``rasterio.transform.TransformMethodsMixin``):
    an implementation base, not where users meet its members."""
    return cls.__name__.endswith(("Mixin", "Base")) or any(
        part.startswith("_") for part in owner_module(cls).split(".")
    )


def path_key(path):
    return (path.count("."), len(path), path)


class Found:
    """An exported object and the paths it is exported at."""

    def __init__(self, obj, kind):
        self.obj = obj
        self.kind = kind
        self.paths = []

    def canonical(self):
        """Where it is defined when that module is listed, else the shortest path."""
        home = [p for p in self.paths if p.rsplit(".", 1)[0] == owner_module(self.obj)]
        return min(home or self.paths, key=path_key)


def key_of(obj):
    if inspect.ismethod(obj):
        return ("method", id(obj.__func__), id(obj.__self__))
    return ("object", id(obj))


def exported(modules, skipped):
    """Every exported class and routine of the listed modules, by identity."""
    found = {}
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except Exception as e:  # a module that does not import is skipped
            skipped.append(f"{module_name}: {type(e).__name__}: {e}")
            continue
        package = module_name.split(".")[0]
        for name in public_names(module):
            try:
                obj = getattr(module, name)
            except Exception:
                continue
            if not belongs(obj, package):
                continue
            if inspect.isclass(obj):
                kind = "class"
            elif is_routine(obj):
                kind = "function"
            else:
                continue
            key = key_of(obj)
            if key not in found:
                found[key] = Found(obj, kind)
            found[key].paths.append(f"{module_name}.{name}")
    return found


def members(cls, package):
    """(name, member, defining class) of the public members a class defines
    or inherits from classes of its own package."""
    own = [c for c in inspect.getmro(cls) if belongs(c, package)]
    out = []
    for mname in sorted(dir(cls)):
        if mname.startswith("_"):
            continue
        definer = next((c for c in own if mname in c.__dict__), None)
        if definer is None:
            continue
        raw = definer.__dict__[mname]
        if isinstance(raw, property) or type(raw).__name__ == "getset_descriptor" or callable(raw):
            member = raw
        else:
            # staticmethod, classmethod, accessors (``GeoDataFrame.plot``)
            try:
                member = getattr(cls, mname)
            except Exception:
                continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        kind = None
        if isinstance(member, property) or type(member).__name__ == "getset_descriptor":
            kind = "property"
        elif callable(member):
            kind = "method"
        if kind is None:
            continue
        out.append((mname, member, definer, kind))
    return out[:METHODS_PER_CLASS]


def entries(modules):
    skipped = []
    found = exported(modules, skipped)
    out = {}

    def add(canonical, aliases, kind, sig, doc, module):
        if not doc and not sig:
            return
        entry = out.get(canonical)
        if entry is None:
            out[canonical] = {
                "name": canonical,
                "aliases": [],
                "kind": kind,
                "signature": sig,
                "doc": doc,
                "module": module,
            }
            entry = out[canonical]
        for a in aliases:
            if a != canonical and a not in entry["aliases"]:
                entry["aliases"].append(a)

    class_paths = {}
    for item in found.values():
        if item.kind == "class":
            class_paths[id(item.obj)] = item

    # Members: one entry per (defining class, name).
    holders = {}
    for item in found.values():
        if item.kind != "class":
            continue
        cls = item.obj
        package = owner_module(cls).split(".")[0]
        try:
            listed = members(cls, package)
        except Exception:
            continue
        for mname, member, definer, kind in listed:
            key = (id(definer), mname)
            slot = holders.setdefault(
                key, {"member": member, "kind": kind, "paths": [], "homes": [], "definer": None}
            )
            home = f"{item.canonical()}.{mname}"
            if definer is cls and not private(cls):
                slot["definer"] = home
            slot["homes"].append((private(cls), path_key(home), home))
            slot["paths"].extend(f"{p}.{mname}" for p in item.paths)

    for item in found.values():
        if item.kind == "class" and item.obj.__name__.endswith(("Mixin", "Base")):
            # An implementation base: its members are indexed on the public
            # classes that inherit them.
            continue
        canonical = item.canonical()
        name = canonical.rsplit(".", 1)[-1]
        add(
            canonical,
            sorted(set(item.paths), key=path_key),
            item.kind,
            signature_of(item.obj, name),
            doc_of(item.obj, name),
            owner_module(item.obj),
        )

    for (_, mname), slot in holders.items():
        paths = sorted(set(slot["paths"]), key=path_key)
        canonical = slot["definer"] or min(slot["homes"])[2]
        member = slot["member"]
        target = member.fget if isinstance(member, property) else member
        kind = slot["kind"]
        add(
            canonical,
            paths,
            kind,
            "" if kind == "property" else signature_of(target, mname),
            doc_of(member if kind == "property" and not isinstance(member, property) else target, mname),
            canonical.split(".")[0],
        )

    # The same docstring under the same last name: one entry.
    by_doc = {}
    for canonical in sorted(out, key=path_key):
        entry = out[canonical]
        if len(entry["doc"]) < 40:
            continue
        key = (canonical.rsplit(".", 1)[-1], entry["doc"])
        first = by_doc.get(key)
        if first is None:
            by_doc[key] = canonical
            continue
        kept = out[first]
        for a in [canonical] + entry["aliases"]:
            if a != first and a not in kept["aliases"]:
                kept["aliases"].append(a)
        del out[canonical]

    result = []
    for entry in out.values():
        if not entry["doc"]:
            continue
        entry["aliases"] = sorted(set(entry["aliases"]) - {entry["name"]}, key=path_key)[:ALIASES_KEPT]
        result.append(entry)
    result.sort(key=lambda e: e["name"])
    return result, skipped


def main(modules):
    warnings.simplefilter("ignore")
    result, skipped = entries(modules)
    for line in skipped:
        print(line, file=sys.stderr)
    for entry in result:
        sys.stdout.write(json.dumps(entry, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
