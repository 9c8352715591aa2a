"""The per-round work of the GISclaw paper's public Python agent, as a
baseline for `benches/agent_step.rs` (written here from its description and
behaviour, not its code).

That agent keeps the conversation as text and flattens all of it into one
prompt every round; reads the model's reply as `Thought: / Action: / Args:`
with regular expressions and a JSON parse; checks for repeated actions by
hashing the code; runs `execute` cells in the agent's own process, in a
thread it can interrupt (a timeout needs that), with stdout and stderr routed
to buffers per thread, the working directory switched for the cell; then
describes every new variable (rows and CRS of frames, shape, min, max and
NaN share of arrays), formats the observation (a failing cell's full
traceback), and warns about an image or raster the cell wrote that is
suspiciously small (the folder's files and times listed before and after
the cell); on a failing cell looks the error up in its error
memory, and records the fix after a self-correction; `finish` checks that
`pred_results/` holds files and that images and tables are not empty by
size and line count. Its progress printing is left out, as gisclaw's
(the bench gives gisclaw no event renderer).

With REFERENCE_MODEL_URL set, each round also asks its model the way that
agent does: the OpenAI Python SDK (imported from REFERENCE_CLIENT_PATH, as
`make bench` installs it from benches/client/requirements.lock), one client
per run, a chat completion of the system prompt and the flattened
conversation with `stop` sequences, the reply's text taken from the answer
(a leading reasoning block dropped) and its usage read. The scripted server
at that URL answers with the replayed replies. Without it, the reply is
taken as is and the model client is left out.

Usage: python agent_step_reference.py REPLAY DATA_DIR WORK_DIR TOOLS_DIR RUNS
Replays REPLAY RUNS times in this process, each run with a fresh sandbox
namespace and work folder (WORK_DIR/1, WORK_DIR/2, ...). Prints a JSON list
per run: per replayed reply, the round's time minus the time spent inside
`exec`, in microseconds.
"""
import hashlib
import io
import json
import os
import re
import sys
import threading
import time
import traceback
import urllib.request

replay_path, data_dir, work_root, tools_dir, runs = sys.argv[1:6]
sys.path.insert(0, tools_dir)

import geopandas as gpd  # noqa: E402  (imported as the agent's sandbox does)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import rasterio  # noqa: E402

MODEL_URL = os.environ.get("REFERENCE_MODEL_URL")
if MODEL_URL:
    sys.path.append(os.environ["REFERENCE_CLIENT_PATH"])
    from openai import OpenAI  # noqa: E402
THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


class Model:
    """The model as that agent asks it: the OpenAI SDK's chat completion."""

    def __init__(self):
        self.client = OpenAI(api_key="bench", base_url=MODEL_URL)
        self.prompt_tokens = self.cached_tokens = self.completion_tokens = 0

    def generate(self, system, user):
        answer = self.client.chat.completions.create(
            model="bench",
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            max_tokens=2048,
            stop=["Observation:", "\nUser:"],
            temperature=0.1,
        )
        text = (answer.choices[0].message.content or "").strip()
        if "think>" in text.lower():
            text = THINK.sub("", text).strip()
        usage = answer.usage
        if usage:  # the agent keeps tokens served from the provider's cache apart
            details = getattr(usage, "prompt_tokens_details", None)
            cached = (getattr(details, "cached_tokens", 0) or 0) if details else 0
            self.prompt_tokens += usage.prompt_tokens - cached
            self.cached_tokens += cached
            self.completion_tokens += usage.completion_tokens
        return text


BLOCKED = {"pykrige": "scipy.interpolate.griddata", "arcpy": "geopandas", "skimage": "scipy.ndimage"}
CONTEXT_CHARS = 100_000
SYSTEM = "You are a GIS analyst agent. Tools: list_files, execute, finish. " * 30


class Router:
    """sys.stdout / sys.stderr that write to the buffer bound to the
    calling thread, else to the real stream."""

    def __init__(self, fallback):
        self.fallback = fallback
        self.targets = {}

    def write(self, text):
        return self.targets.get(threading.get_ident(), self.fallback).write(text)

    def flush(self):
        pass


def describe(value):
    if isinstance(value, gpd.GeoDataFrame):
        cols = [c for c in value.columns if c != "geometry"]
        return f"GeoDataFrame, {len(value)} rows, CRS={value.crs}\n  Columns: {', '.join(map(str, cols[:15]))}"
    if isinstance(value, pd.DataFrame):
        return f"DataFrame, {len(value)} rows, {len(value.columns)} cols\n  Columns: {', '.join(map(str, value.columns[:15]))}"
    if isinstance(value, np.ndarray):
        text = f"ndarray, shape={value.shape}, dtype={value.dtype}"
        if value.size and value.dtype.kind in "biuf":
            text += f", min={np.nanmin(value):.4g}, max={np.nanmax(value):.4g}"
            if value.dtype.kind == "f" and np.isnan(value).any():
                text += f", NaN ratio={np.isnan(value).mean():.1%}"
        return text
    if isinstance(value, gpd.GeoSeries):
        return f"GeoSeries, {len(value)} geometries, CRS={value.crs}"
    text = str(value)
    return f"{type(value).__name__}: {text[:200]}"


class Sandbox:
    def __init__(self):
        self.namespace = {"np": np, "pd": pd, "gpd": gpd, "plt": plt, "rasterio": rasterio, "os": os}
        exec("from gisclaw_tools import *", self.namespace)
        self.out, self.err = Router(sys.stdout), Router(sys.stderr)
        sys.stdout, sys.stderr = self.out, self.err
        self.history = []

    def execute(self, code):
        """(observation, seconds inside exec)."""
        for line in code.split("\n"):
            for package, alternative in BLOCKED.items():
                if f"import {package}" in line or f"from {package}" in line:
                    return f"Execution failed\nstderr:\nPackage '{package}' is not available; use {alternative}.", 0.0
        before = set(self.namespace)
        stdout, stderr = io.StringIO(), io.StringIO()
        inside = [0.0]
        ok = [True]

        def target():
            tid = threading.get_ident()
            self.out.targets[tid], self.err.targets[tid] = stdout, stderr
            start = time.perf_counter()
            try:
                exec(code, self.namespace)
            except BaseException:  # noqa: BLE001
                ok[0] = False
                stderr.write(traceback.format_exc())
            inside[0] = time.perf_counter() - start
            del self.out.targets[tid], self.err.targets[tid]

        home = os.getcwd()
        os.chdir(work_dir)
        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.2)
        os.chdir(home)
        parts = ["Execution successful" if ok[0] else "Execution failed"]
        if stdout.getvalue().strip():
            parts.append("stdout:\n" + stdout.getvalue().strip()[:800])
        if stderr.getvalue().strip():
            parts.append("stderr:\n" + stderr.getvalue().strip()[-600:])
        new = sorted(n for n in set(self.namespace) - before if not n.startswith("_"))
        if new:
            parts.append("Variable changes:\n" + "\n".join(f"  {n}: {describe(self.namespace[n])}" for n in new))
        if ok[0]:
            self.history.append(code)
        return "\n".join(parts), inside[0]


def written_files():
    """pred_results/'s files and their modification times."""
    pred = os.path.join(work_dir, "pred_results")
    if not os.path.isdir(pred):
        return {}
    return {f: os.path.getmtime(os.path.join(pred, f)) for f in os.listdir(pred)}


def size_warnings(before):
    """Warnings for images and rasters the cell wrote that are suspiciously small."""
    warnings = []
    pred = os.path.join(work_dir, "pred_results")
    for name, mtime in written_files().items():
        if name in before and mtime <= before[name]:
            continue
        kb = os.path.getsize(os.path.join(pred, name)) / 1024
        if name.endswith(".png") and kb < 30:
            warnings.append(f"Output QC warning: {name} is only {kb:.1f}KB, the image may be blank!")
        if name.endswith(".tif") and kb < 1:
            warnings.append(f"Output QC warning: {name} is only {kb:.1f}KB, the raster may be empty!")
    return warnings


KNOWN_ERRORS = {
    "has no attribute 'read'": "load_raster returns an ndarray; use rasterio.open() for a dataset.",
    "has no attribute 'crs'": "unary_union returns a geometry; wrap it in a GeoDataFrame with a CRS.",
    "memoryerror": "sample the input before processing it.",
    "geoplot": "use matplotlib instead.",
    "forwardcompatibility": "ignore this driver warning.",
}


def list_files():
    lines = []
    for root, _, files in os.walk(data_dir):
        for name in sorted(files):
            path = os.path.join(root, name)
            lines.append(f"{os.path.relpath(path, data_dir)} ({os.path.getsize(path)} bytes)")
    return "\n".join(lines)


def validate_outputs():
    pred = os.path.join(work_dir, "pred_results")
    files = [f for f in os.listdir(pred) if not f.startswith(".")] if os.path.isdir(pred) else []
    if not files:
        return "pred_results/ is empty"
    issues = []
    for name in files:
        path = os.path.join(pred, name)
        if name.lower().endswith((".png", ".jpg")) and os.path.getsize(path) < 5000:
            issues.append(f"{name}: may be blank")
        if name.lower().endswith(".csv"):
            with open(path) as f:
                if sum(1 for _ in f) <= 1:
                    issues.append(f"{name}: header only")
    return "\n".join(issues)


def flatten(task, history):
    parts = [task] + [f"\nAssistant:\n{c}" if r == "assistant" else f"\n{c}" for r, c in history]
    parts.append("\nNow continue with the next step. Respond with Thought/Action/Args:")
    text = "\n".join(parts)
    if len(text) > CONTEXT_CHARS:
        tail = parts[1:]
        while len(tail) > 14 and len(task) + sum(len(x) + 1 for x in tail) > CONTEXT_CHARS:
            tail = tail[2:]
        text = task + "\n\n... (earlier steps omitted) ...\n\n" + "\n".join(tail)
    return text


def parse(reply):
    thought = re.search(r"Thought:\s*(.*?)(?=\nAction:|\Z)", reply, re.DOTALL)
    action = re.search(r"Action:\s*(\w+)", reply)
    args = re.search(r"Args:\s*(.*)", reply, re.DOTALL)
    try:
        parsed = json.loads(args.group(1).strip()) if args else {}
    except ValueError:
        parsed = {}
    return (thought.group(1).strip() if thought else ""), (action.group(1) if action else ""), parsed


NAMES = {"execute_python": "execute", "list_files": "list_files", "finish": "finish"}
replies = []
with open(replay_path) as f:
    for line in f:
        if line.strip() and not line.startswith("//"):
            message = json.loads(line)
            call = message["tool_calls"][0]["function"]
            replies.append(f"Thought: {message.get('content') or ''}\nAction: {NAMES[call['name']]}\nArgs: {call['arguments']}")

def run():
    """One replay of `replies` with a fresh sandbox: each round's overhead."""
    os.makedirs(os.path.join(work_dir, "pred_results"), exist_ok=True)
    os.symlink(os.path.abspath(data_dir), os.path.join(work_dir, "data"))
    sandbox = Sandbox()
    model = None
    if MODEL_URL:  # the server is handed this run's replies, then asked for them
        queue = [{"role": "assistant", "content": text} for text in replies]
        request = urllib.request.Request(MODEL_URL.rsplit("/v1", 1)[0] + "/queue", json.dumps(queue).encode())
        urllib.request.urlopen(request).read()
        model = Model()
    task = "Task: map the afternoon air temperature of the city from the station readings.\n"
    history, details, recent = [], [], []
    memory = dict(KNOWN_ERRORS)
    failed_before = False
    overheads = []
    for number, reply_text in enumerate(replies, 1):
        start = time.perf_counter()
        conversation = flatten(task, history)
        if model:  # the replayed reply, asked for over HTTP
            reply = model.generate(SYSTEM, conversation)
        else:
            prompt = SYSTEM + conversation  # what the model would be sent
            reply = reply_text  # the replayed model's answer to `prompt`
        thought, action, args = parse(reply)
        inside = 0.0
        if action == "execute":
            code = args.get("code", "")
            normalised = "\n".join(l.strip() for l in code.split("\n") if l.strip() and not l.strip().startswith("#"))
            digest = hashlib.md5(normalised.encode()).hexdigest()
            recent = (recent + [digest])[-6:]
            before = written_files()
            observation, inside = sandbox.execute(code)
            warnings = size_warnings(before)
            if warnings:
                observation += "\n\n" + "\n".join(warnings)
            failed = observation.startswith("Execution failed")
            if failed:
                lowered = observation.lower()
                hint = next((fix for key, fix in memory.items() if key.lower() in lowered), None)
                if hint:
                    observation += f"\n\nHint from an earlier error in this run:\n{hint}"
            elif failed_before and len(history) >= 2:
                memory[history[-1][1].split("\n")[0][:80]] = "Fix method: " + observation.split("\n")[0][:80]
            failed_before = failed
        elif action == "list_files":
            observation = list_files()
        elif action == "finish":
            observation = validate_outputs() or "Finished."
        else:
            observation = "Format error: could not parse Action."
        history += [("assistant", reply), ("user", f"Observation: {observation}")]
        details.append({"round": number, "thought": thought[:200], "action": action, "observation": observation[:500]})
        overheads.append((time.perf_counter() - start - inside) * 1e6)
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return overheads


results = []
for n in range(1, int(runs) + 1):
    work_dir = os.path.join(work_root, str(n))
    results.append(run())
print(json.dumps(results))
