"""The baseline for `cargo bench --bench eval_scoring`: the same L1 and L3
metrics as gisclaw's eval, written the straightforward way in Python with the
usual libraries (tokenize, ast, codebleu, numpy, scipy, rasterio, geopandas,
shapely, pandas, Pillow) and run in the sandbox venv.

Usage: python eval_scoring_baseline.py JOBS.json API_OPS.toml
JOBS.json is a list of {"gold_code", "candidate_code", "outputs": [[declared,
gold_path, candidate_path], ...]}. Prints one JSON line: the seconds spent
scoring L1 and L3 (imports and job loading excluded) and the mean L1/L3 scores, which
the bench compares with gisclaw's as a sanity check.
"""

import ast
import io
import json
import os
import sys
import time
import tokenize
import tomllib
from collections import Counter

import numpy as np
import pandas as pd
import geopandas as gpd
import rasterio
from PIL import Image
from scipy.ndimage import uniform_filter
from codebleu import calc_codebleu

SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def tokens(source):
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in SKIP]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source.split()


def ngrams(seq, n):
    return Counter(tuple(seq[i:i + n]) for i in range(len(seq) - n + 1))


def bleu4(ref, cand):
    if not ref or not cand:
        return 0.0
    logs = 0.0
    for n in range(1, 5):
        c, r = ngrams(cand, n), ngrams(ref, n)
        total = sum(c.values())
        clipped = sum(min(v, r[g]) for g, v in c.items())
        if total == 0 or clipped == 0:
            return 0.0
        logs += np.log(clipped / total) / 4
    bp = 1.0 if len(cand) >= len(ref) else np.exp(1 - len(ref) / len(cand))
    return float(bp * np.exp(logs))


def lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        row = [0]
        for j, y in enumerate(b):
            row.append(prev[j] + 1 if x == y else max(prev[j + 1], row[j]))
        prev = row
    return prev[-1]


def rouge_l(ref, cand):
    if not ref or not cand:
        return 0.0
    l = lcs(ref, cand)
    if l == 0:
        return 0.0
    p, r = l / len(cand), l / len(ref)
    return 2 * p * r / (p + r)


def levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            row.append(min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = row
    return prev[-1]


def edit_similarity(ref, cand):
    longest = max(len(ref), len(cand))
    return 1.0 if longest == 0 else 1 - levenshtein(ref, cand) / longest


def qualified_names(source):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    names = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            parts = []
            cur = node
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name):
                parts.append(aliases.get(cur.id, cur.id))
            names.append(".".join(reversed(parts)).split("."))
    return names


def operations(source, table):
    names = qualified_names(source)
    found = set()
    for op, patterns in table.items():
        for pattern in patterns:
            p = pattern.split(".")
            if any(len(n) >= len(p) and n[-len(p):] == p for n in names):
                found.add(op)
                break
    return found


def f1(gold, cand):
    if not gold and not cand:
        return 1.0
    inter = len(gold & cand)
    if inter == 0:
        return 0.0
    p, r = inter / len(cand), inter / len(gold)
    return 2 * p * r / (p + r)


def f_rho(rho):
    return 1.0 if rho >= 0.99 else 0.75 if rho >= 0.9 else 0.5 if rho >= 0.7 else 0.25 if rho >= 0.5 else 0.0


def g_mre(mre):
    return 1.0 if mre <= 0.01 else 0.75 if mre <= 0.05 else 0.5 if mre <= 0.15 else 0.25 if mre <= 0.3 else 0.0


def raster_score(gold, cand):
    with rasterio.open(gold) as g, rasterio.open(cand) as c:
        a = g.read(masked=True).astype("float64").filled(np.nan)
        b = c.read(masked=True).astype("float64").filled(np.nan)
        crs = float(g.crs == c.crs)
    if a.shape != b.shape:
        return 0.2 * crs
    ok = ~np.isnan(a) & ~np.isnan(b)
    x, y = a[ok], b[ok]
    rho = np.corrcoef(x, y)[0, 1] if len(x) > 1 and x.std() > 0 and y.std() > 0 else (1.0 if np.array_equal(x, y) else 0.0)
    denom = np.abs(x).sum()
    mre = np.abs(x - y).sum() / denom if denom > 0 else (0.0 if np.abs(x - y).sum() == 0 else np.inf)
    return 0.2 + 0.2 * crs + 0.3 * f_rho(0.0 if np.isnan(rho) else rho) + 0.3 * g_mre(mre)


def vector_score(gold, cand, with_geometry=True):
    g, c = gpd.read_file(gold), gpd.read_file(cand)
    count = 1.0 if max(len(g), len(c)) == 0 else min(len(g), len(c)) / max(len(g), len(c))
    crs = float(g.crs == c.crs)
    gc = {x.lower() for x in g.columns if x != "geometry"}
    cc = {x.lower() for x in c.columns if x != "geometry"}
    columns = 1.0 if not (gc | cc) else len(gc & cc) / len(gc | cc)
    if not with_geometry:
        return (count + crs + columns) / 3
    if c.crs is not None and g.crs is not None and c.crs != g.crs:
        c = c.to_crs(g.crs)
    polygonal = all(t in ("Polygon", "MultiPolygon") for t in list(g.geom_type) + list(c.geom_type))
    if polygonal:
        dist = 0.0
    else:
        x0, y0, x1, y1 = g.total_bounds
        diag = float(np.hypot(x1 - x0, y1 - y0))
        dist = 0.005 * diag if diag > 0 else 1.0
    a = g.geometry.buffer(dist).union_all().buffer(0)
    b = c.geometry.buffer(dist).union_all().buffer(0)
    inter = a.intersection(b).area
    union = a.area + b.area - inter
    iou = inter / union if union > 0 else 0.0
    return (count + crs + columns + iou) / 4


def table_score(gold, cand):
    g, c = pd.read_csv(gold), pd.read_csv(cand)
    g.columns = [x.strip().lower() for x in g.columns]
    c.columns = [x.strip().lower() for x in c.columns]
    gc, cc = set(g.columns), set(c.columns)
    columns = len(gc & cc) / len(gc | cc) if gc | cc else 1.0
    rows = 1.0 if max(len(g), len(c)) == 0 else min(len(g), len(c)) / max(len(g), len(c))
    shared = [x for x in g.columns if x in cc]
    key = next((k for k in shared if g[k].is_unique and c[k].is_unique and not pd.api.types.is_numeric_dtype(g[k])), None)
    if key is not None:
        merged = g.merge(c, on=key, suffixes=("_g", "_c"))
    else:
        n = min(len(g), len(c))
        merged = pd.concat([g.iloc[:n].add_suffix("_g").reset_index(drop=True), c.iloc[:n].add_suffix("_c").reset_index(drop=True)], axis=1)
    rhos = []
    for k in shared:
        if k == key or not (pd.api.types.is_numeric_dtype(g[k]) and pd.api.types.is_numeric_dtype(c[k])):
            continue
        pair = merged[[f"{k}_g", f"{k}_c"]].dropna().to_numpy(dtype="float64")
        if len(pair) == 0:
            rhos.append(0.0)
        elif len(pair) >= 2 and pair[:, 0].std() > 0 and pair[:, 1].std() > 0:
            rhos.append(max(0.0, float(np.corrcoef(pair[:, 0], pair[:, 1])[0, 1])))
        else:
            size = np.abs(pair[:, 0]).sum()
            err = np.abs(pair[:, 0] - pair[:, 1]).sum()
            rhos.append(1 - min(1.0, err / size) if size > 0 else float(err == 0))
    if not rhos:
        return (columns + rows) / 2
    return (columns + rows + sum(rhos) / len(rhos)) / 3


def grey(path):
    im = Image.open(path).convert("RGB").resize((256, 256), Image.BILINEAR)
    return np.asarray(im, dtype="float64").mean(axis=2)


def image_score(gold, cand):
    colours = Image.open(cand).convert("RGB").getcolors(maxcolors=5)
    if colours is not None:  # at most 5 colours: blank
        return 0.0
    a, b = grey(gold), grey(cand)
    rng = a.max() - a.min() or 1.0
    c1, c2 = (0.01 * rng) ** 2, (0.03 * rng) ** 2
    w = 7
    norm = w * w / (w * w - 1)
    ma, mb = uniform_filter(a, w), uniform_filter(b, w)
    va = norm * (uniform_filter(a * a, w) - ma * ma)
    vb = norm * (uniform_filter(b * b, w) - mb * mb)
    cov = norm * (uniform_filter(a * b, w) - ma * mb)
    s = ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
    pad = w // 2
    return max(0.0, float(s[pad:-pad, pad:-pad].mean()))


def text_score(gold, cand):
    g, c = open(gold, "rb").read(), open(cand, "rb").read()
    try:
        if json.loads(g) == json.loads(c):
            return 1.0
    except ValueError:
        pass
    return rouge_l(g.decode("utf-8", "replace").split(), c.decode("utf-8", "replace").split())


def score_output(declared, gold, cand):
    if not os.path.isfile(cand) or os.path.getsize(cand) == 0:
        return 0.0
    ext = os.path.splitext(declared)[1].lower()
    try:
        if ext in (".tif", ".tiff", ".nc", ".img", ".asc", ".vrt", ".grd"):
            return raster_score(gold, cand)
        if ext in (".geojson", ".shp", ".gpkg", ".kml", ".gml", ".fgb", ".geojsonl"):
            return vector_score(gold, cand)
        if ext == ".csv":
            return table_score(gold, cand)
        if ext in (".xlsx", ".xls", ".ods"):
            return vector_score(gold, cand, with_geometry=False)
        if ext in (".png", ".jpg", ".jpeg", ".gif", ".webp"):
            return image_score(gold, cand)
        return text_score(gold, cand)
    except Exception:
        return 0.0


def main():
    jobs = json.load(open(sys.argv[1], encoding="utf-8"))
    table = tomllib.load(open(sys.argv[2], "rb"))["ops"]
    l1, l3 = [], []
    l1_seconds = l3_seconds = 0.0
    for job in jobs:
        start = time.perf_counter()
        g, c = tokens(job["gold_code"]), tokens(job["candidate_code"])
        api = f1(operations(job["gold_code"], table), operations(job["candidate_code"], table))
        cb = calc_codebleu([job["gold_code"]], [job["candidate_code"]], "python")["codebleu"]
        l1.append((bleu4(g, c) + rouge_l(g, c) + edit_similarity(g, c) + api + cb) / 5)
        middle = time.perf_counter()
        scores = [score_output(*o) for o in job["outputs"]]
        l3.append(sum(scores) / len(scores) if scores else 0.0)
        l1_seconds += middle - start
        l3_seconds += time.perf_counter() - middle
    print(json.dumps({"l1_seconds": l1_seconds, "l3_seconds": l3_seconds, "l1_mean": sum(l1) / len(l1), "l3_mean": sum(l3) / len(l3)}))


if __name__ == "__main__":
    main()
