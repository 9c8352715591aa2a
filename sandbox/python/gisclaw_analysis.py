"""Static analysis of a cell against the live namespace, before it runs.

A cell is read with ``ast`` and checked against the objects it names in the
session's namespace, without running it and without calling anything it
names: attributes are looked up with ``inspect.getattr_static`` (no
descriptor, property or ``__getattr__`` runs), signatures with
``inspect.signature``, DataFrame columns from ``.columns``.

Each finding has a line, a kind, a message the model can act on (with the
nearest real names) and ``certain``: true only when the cell cannot run
as written — a syntax error, a name bound nowhere, a keyword the function
does not take, a column the frame does not have, a refused import, a
missing file under ``data/``. Objects whose attributes are computed
(``__getattr__``) give uncertain findings, never certain ones.

Kinds: ``syntax``, ``name``, ``attribute``, ``keyword``, ``column``,
``import``, ``path``.
"""

import ast
import builtins
import difflib
import inspect
import os
import sys
import textwrap

_GLOB = set("*?[")
# Methods that change their object in place.
_MUTATORS = {"insert", "update", "pop", "setdefault", "__setitem__", "set_crs", "clear"}


def _nearest(name, candidates, n=3):
    """Up to ``n`` names close to ``name`` (case-insensitive first)."""
    candidates = [c for c in candidates if isinstance(c, str)]
    lowered = {c.lower(): c for c in candidates}
    exact = lowered.get(name.lower())
    close = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.6)
    found = ([exact] if exact else []) + [lowered[c] for c in close if lowered[c] != exact]
    return found[:n]


def _kwargs_read(func):
    """The keyword names ``func``'s own source reads from its ``**kwargs``
    (``kwargs.pop("x")``, ``.get``, ``.setdefault``, ``kwargs["x"]``,
    ``"x" in kwargs``); empty when its source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except Exception:
        return set()
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.args.kwarg is None:
        return set()
    var = fn.args.kwarg.arg

    def text(node):
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    def is_var(node):
        return isinstance(node, ast.Name) and node.id == var

    names = set()
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and is_var(node.func.value) and node.func.attr in ("pop", "get", "setdefault")
                and node.args and text(node.args[0])):
            names.add(text(node.args[0]))
        elif isinstance(node, ast.Subscript) and is_var(node.value) and text(node.slice):
            names.add(text(node.slice))
        elif (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.In, ast.NotIn))
                and is_var(node.comparators[0]) and text(node.left)):
            names.add(text(node.left))
    return names


def _forwarded_names(func):
    """Keyword names a ``**kwargs`` function may take: those its source
    reads from ``**kwargs``, and the parameters (and ``**kwargs`` reads) of
    the functions and methods of the same name in its package — a method's
    delegation chain, as ``GeoSeries.buffer`` → ``GeometryArray.buffer``.
    Found in module and class dicts and source files: nothing is called."""
    try:
        func = inspect.unwrap(func)
    except Exception:
        return set()
    names = _kwargs_read(func)
    name = getattr(func, "__name__", None)
    module = getattr(func, "__module__", None)
    if not isinstance(name, str) or not isinstance(module, str):
        return names
    package = module.split(".")[0]
    keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == package or mod_name.startswith(package + ".")):
            continue
        try:
            values = list(vars(mod).values())
        except TypeError:
            continue
        for value in values:
            found = []
            if inspect.isclass(value) and getattr(value, "__module__", None) == mod_name:
                member = value.__dict__.get(name)
                if inspect.isfunction(member):
                    found.append(member)
            elif (inspect.isfunction(value) and value.__name__ == name
                    and getattr(value, "__module__", None) == mod_name):
                found.append(value)
            for other in found:
                if other is func:
                    continue
                try:
                    params = inspect.signature(other).parameters
                except (TypeError, ValueError):
                    continue
                names |= {n for n, p in params.items() if p.kind in keyword_kinds}
                names |= _kwargs_read(other)
    return names


def _hint(name, candidates):
    near = _nearest(name, candidates)
    return f"; nearest: {', '.join(repr(n) for n in near)}" if near else ""


class _Bindings(ast.NodeVisitor):
    """Every name the cell binds anywhere (any scope), and whether it does
    something that defeats a name check (``from x import *``, ``exec``,
    ``globals()``)."""

    def __init__(self):
        self.names = set()
        self.dynamic = False
        # Names bound only by ``import m as n``: n is module m.
        self.imports = {}
        self.assigned = set()
        # Names whose object the cell changes in place (``x['c'] = …``,
        # ``x.a = …``, ``x.f(inplace=True)``): their columns and attributes
        # are not checked.
        self.mutated = set()

    def _base_name(self, node):
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def visit_Subscript(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            base = self._base_name(node)
            if base:
                self.mutated.add(base)
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            base = self._base_name(node)
            if base:
                self.mutated.add(base)
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Attribute):
            in_place = any(k.arg == "inplace" for k in node.keywords)
            if in_place or node.func.attr in _MUTATORS:
                base = self._base_name(node.func.value)
                if base:
                    self.mutated.add(base)
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.names.add(node.id)
            self.assigned.add(node.id)
        elif node.id in ("exec", "eval", "globals", "locals", "vars", "__import__"):
            self.dynamic = True

    def _bind_function(self, node):
        self.names.add(node.name)
        args = node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            self.names.add(a.arg)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self.names.add(a.arg)
        self.generic_visit(node)

    visit_FunctionDef = _bind_function
    visit_AsyncFunctionDef = _bind_function

    def visit_Lambda(self, node):
        args = node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            self.names.add(a.arg)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self.names.add(a.arg)
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        self.names.add(node.name)
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            name = alias.asname or alias.name.partition(".")[0]
            self.names.add(name)
            module = alias.name if alias.asname else alias.name.partition(".")[0]
            if self.imports.get(name, module) != module:
                self.assigned.add(name)
            self.imports[name] = module

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name == "*":
                self.dynamic = True
            else:
                self.names.add(alias.asname or alias.name)

    def visit_ExceptHandler(self, node):
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node):
        self.names.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_MatchAs(self, node):
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self.names.add(node.name)

    def visit_MatchMapping(self, node):
        if node.rest:
            self.names.add(node.rest)
        self.generic_visit(node)


def _static_attr(obj, name):
    """``(found, value)`` without running descriptors or ``__getattr__``."""
    try:
        return True, inspect.getattr_static(obj, name)
    except AttributeError:
        return False, None
    except Exception:
        return True, None


def _computes_attributes(obj):
    """Whether ``obj`` may have attributes ``getattr_static`` cannot see."""
    if inspect.ismodule(obj):
        return "__getattr__" in vars(obj)
    kind = type(obj)
    for base in kind.__mro__:
        if base is object:
            continue
        d = vars(base)
        if "__getattr__" in d or "__getattribute__" in d:
            return True
    if not hasattr(kind, "__slots__") and not hasattr(obj, "__dict__"):
        return True
    return False


def _overrides_lookup(obj):
    """Whether ``obj``'s type replaces attribute lookup altogether."""
    return any(
        "__getattribute__" in vars(base) for base in type(obj).__mro__ if base is not object
    ) and not inspect.ismodule(obj) and not inspect.isclass(obj)


def _is_frame(obj):
    """A pandas DataFrame (or GeoDataFrame), without importing pandas."""
    for base in type(obj).__mro__:
        if base.__name__ == "DataFrame" and base.__module__.startswith("pandas"):
            return True
    return False


def _columns(frame):
    try:
        return [c for c in frame.columns]
    except Exception:
        return None


class _Checker(ast.NodeVisitor):
    def __init__(self, namespace, bindings, blocked, cwd):
        self.ns = namespace
        self.bindings = bindings
        self.bound = bindings.names
        self.blocked = blocked
        self.cwd = cwd
        self.findings = []
        self.seen = set()

    def add(self, node, kind, message, certain):
        key = (getattr(node, "lineno", 0), kind, message)
        if key in self.seen:
            return
        self.seen.add(key)
        self.findings.append({
            "line": getattr(node, "lineno", 0),
            "kind": kind,
            "message": message,
            "certain": bool(certain),
        })

    def live(self, node):
        """The namespace object an expression names, when the cell cannot
        have changed it: ``x`` or ``x.a.b`` with ``x`` not rebound."""
        if isinstance(node, ast.Name):
            b = self.bindings
            if node.id in b.mutated:
                return False, None
            if node.id in b.imports and node.id not in b.assigned:
                # ``import m as n`` names m, when m is imported already
                # (importing it here would run its code).
                module = sys.modules.get(b.imports[node.id])
                return (module is not None), module
            if node.id in self.bound or node.id not in self.ns:
                return False, None
            return True, self.ns[node.id]
        if isinstance(node, ast.Attribute):
            ok, base = self.live(node.value)
            if not ok or _overrides_lookup(base):
                return False, None
            # Found statically, it is what the cell gets (``__getattr__``
            # only runs when this lookup fails).
            found, value = _static_attr(base, node.attr)
            if not found or value is None:
                return False, None
            # A descriptor (property, method wrapper) is not the value.
            if inspect.ismodule(base) or inspect.isclass(base) or callable(value):
                return True, value
            return False, None
        return False, None

    def visit_Attribute(self, node):
        if isinstance(node.ctx, ast.Load):
            ok, base = self.live(node.value)
            if ok:
                found, _ = _static_attr(base, node.attr)
                if not found:
                    what = ast.unparse(node.value)
                    names = [n for n in dir(base) if not n.startswith("_")] if _safe_dir(base) else []
                    extra = []
                    if _is_frame(base):
                        columns = _columns(base) or []
                        if node.attr in columns:
                            found = True
                        extra = [c for c in columns if isinstance(c, str)]
                    if not found:
                        computed = _computes_attributes(base) and not _is_frame(base)
                        self.add(
                            node,
                            "attribute",
                            f"`{what}.{node.attr}`: {_describe(base)} has no attribute `{node.attr}`"
                            + _hint(node.attr, names + extra),
                            certain=not computed,
                        )
        self.generic_visit(node)

    def visit_Call(self, node):
        for arg in node.args:
            self.check_path(arg)
        for kw in node.keywords:
            self.check_path(kw.value)
        ok, func = self.live(node.func)
        if ok and node.keywords:
            try:
                sig = inspect.signature(func)
            except (TypeError, ValueError):
                sig = None
            if sig is not None:
                params = sig.parameters
                takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
                names = [n for n, p in params.items() if p.kind in (
                    inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
                for kw in node.keywords:
                    if kw.arg is None or kw.arg in names:
                        continue
                    where = kw if hasattr(kw, "lineno") else node
                    if not takes_any:
                        self.add(
                            where,
                            "keyword",
                            f"`{ast.unparse(node.func)}()` takes no keyword `{kw.arg}`"
                            + _hint(kw.arg, names),
                            certain=True,
                        )
                        continue
                    # A function that passes other keywords on (**kwargs)
                    # may take any name further down; a near miss of a
                    # name it or its delegates take is most likely a
                    # misspelling.
                    known = set(names) | _forwarded_names(func)
                    if kw.arg in known:
                        continue
                    near = difflib.get_close_matches(kw.arg, sorted(known), n=1, cutoff=0.8)
                    if near:
                        self.add(
                            where,
                            "keyword",
                            f"`{ast.unparse(node.func)}()` has no parameter `{kw.arg}`"
                            f" (did you mean `{near[0]}`? other keywords go on to **kwargs)",
                            certain=False,
                        )
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if isinstance(node.ctx, ast.Load):
            ok, frame = self.live(node.value)
            if ok and _is_frame(frame):
                columns = _columns(frame)
                if columns is not None:
                    keys = []
                    s = node.slice
                    if isinstance(s, ast.Constant) and isinstance(s.value, str):
                        keys = [s.value]
                    elif isinstance(s, ast.List) and all(
                            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in s.elts):
                        keys = [e.value for e in s.elts]
                    for key in keys:
                        if key not in columns:
                            self.add(
                                node,
                                "column",
                                f"`{ast.unparse(node.value)}['{key}']`: no such column"
                                + _hint(key, columns),
                                certain=True,
                            )
        self.generic_visit(node)

    def _import(self, node, name):
        top = name.partition(".")[0]
        alternative = self.blocked.get(top)
        if alternative is not None:
            self.add(node, "import", f"`{top}` is not available in this sandbox; use {alternative} instead", True)

    def visit_Import(self, node):
        for alias in node.names:
            self._import(node, alias.name)

    def visit_ImportFrom(self, node):
        if node.module and not node.level:
            self._import(node, node.module)

    def check_path(self, node):
        """A whole path literal under ``data/`` (an argument or an assigned
        value, not a piece of a concatenation or f-string) that does not
        exist."""
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            return
        value = node.value
        if not value.startswith(("data/", "./data/")) or "\n" in value or len(value) > 500:
            return
        if _GLOB & set(value) or "{" in value or "%" in value:
            return
        path = os.path.join(self.cwd, value)
        if os.path.exists(path):
            return
        parent = os.path.dirname(path)
        try:
            siblings = os.listdir(parent) if os.path.isdir(parent) else []
        except OSError:
            siblings = []
        self.add(
            node,
            "path",
            f"`{value}` does not exist" + _hint(os.path.basename(value.rstrip("/")), siblings),
            certain=True,
        )

    def visit_Assign(self, node):
        self.check_path(node.value)
        self.generic_visit(node)


def _safe_dir(obj):
    try:
        dir(obj)
        return True
    except Exception:
        return False


def _describe(obj):
    if inspect.ismodule(obj):
        return f"module `{obj.__name__}`"
    if inspect.isclass(obj):
        return f"class `{obj.__name__}`"
    return f"a `{type(obj).__name__}`"


def analyse(code, namespace, blocked, cwd):
    """The findings of ``code`` (a list of dicts, in line order)."""
    try:
        tree = ast.parse(code, filename="<cell>", mode="exec")
    except SyntaxError as exc:
        where = f" (column {exc.offset})" if exc.offset else ""
        return [{
            "line": exc.lineno or 0,
            "kind": "syntax",
            "message": f"{exc.msg}{where}",
            "certain": True,
        }]
    bindings = _Bindings()
    bindings.visit(tree)
    checker = _Checker(namespace, bindings, blocked, cwd)
    checker.visit(tree)
    if not bindings.dynamic:
        known = set(namespace) | bindings.names | set(dir(builtins))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
                checker.add(
                    node,
                    "name",
                    f"`{node.id}` is not defined (not in the cell, not in the namespace)"
                    + _hint(node.id, [n for n in known if not n.startswith("_")]),
                    certain=True,
                )
    return sorted(checker.findings, key=lambda f: f["line"])
