"""Extract the API documentation of installed Python modules as JSON lines.

Run with the sandbox venv's interpreter by ``gisclaw knowledge build``:

    python extract_docs.py MODULE [MODULE ...]  > docs.jsonl

One line per public function, class and public method defined by the
module's own package (re-exports from other packages are skipped): its
qualified name, kind, signature and docstring (cut). A module that does not
import is reported on stderr and skipped. The output is sorted by name so
that the same environment always gives the same file.
"""

import importlib
import inspect
import json
import sys
import warnings

DOC_CHARS = 1500
METHODS_PER_CLASS = 300


def signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def doc(obj):
    text = inspect.getdoc(obj) or ""
    return text[:DOC_CHARS]


def public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return sorted(set(n for n in names if isinstance(n, str)))


def belongs(obj, package):
    owner = getattr(obj, "__module__", None) or ""
    return owner == package or owner.startswith(package + ".")


def entries(module_name):
    module = importlib.import_module(module_name)
    package = module_name.split(".")[0]
    for name in public_names(module):
        try:
            obj = getattr(module, name)
        except Exception:
            continue
        if inspect.isclass(obj) and belongs(obj, package):
            qual = f"{module_name}.{name}"
            yield obj, id(obj), {"name": qual, "kind": "class", "signature": signature(obj), "doc": doc(obj)}
            methods = []
            # Methods defined by the class or by a base from its own package
            # (GeoDataFrame's geometry methods), not by pandas or object.
            own = [c for c in inspect.getmro(obj) if belongs(c, package)]
            for mname, member in inspect.getmembers(obj):
                if mname.startswith("_") or not any(mname in c.__dict__ for c in own):
                    continue
                if callable(member) or isinstance(member, property):
                    methods.append((mname, member))
            for mname, member in methods[:METHODS_PER_CLASS]:
                target = member.fget if isinstance(member, property) else member
                kind = "property" if isinstance(member, property) else "method"
                yield target, id(obj), {
                    "name": f"{qual}.{mname}",
                    "kind": kind,
                    "signature": "" if kind == "property" else signature(target),
                    "doc": doc(target),
                }
        elif (inspect.isfunction(obj) or inspect.isbuiltin(obj) or type(obj).__name__ == "ufunc") and belongs(obj, package):
            yield obj, None, {"name": f"{module_name}.{name}", "kind": "function", "signature": signature(obj), "doc": doc(obj)}


def main(modules):
    warnings.simplefilter("ignore")
    seen = set()
    skipped = set()
    out = []
    for module_name in modules:
        try:
            found = list(entries(module_name))
        except Exception as e:  # a module that does not import is skipped
            print(f"{module_name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        for obj, owner, entry in found:
            # One entry per object, under the first (most specific) module
            # listed; a class seen before brings none of its methods again.
            if entry["kind"] in ("method", "property"):
                if owner in skipped:
                    continue
            else:
                if id(obj) in seen:
                    if owner is not None:
                        skipped.add(owner)
                    continue
                seen.add(id(obj))
            if not entry["doc"]:
                continue
            entry["module"] = module_name
            out.append(entry)
    out.sort(key=lambda e: e["name"])
    for entry in out:
        sys.stdout.write(json.dumps(entry, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
