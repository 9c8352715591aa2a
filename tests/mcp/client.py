"""A real MCP client (the official Python SDK) driving `gisclaw mcp` over stdio.

Run by tests/all/mcp.rs as `client.py SCENARIO GISCLAW DATA WORKDIR`; each
scenario starts its own server, asserts what a client would see, and prints
one JSON line of what it observed (`{"ok": true, ...}`) for the Rust side to
check. A failed assertion exits non-zero with its message.
"""

import base64
import json
import os
import socket
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def params(gisclaw, data, workdir, extra_env=None, extra_args=()):
    """How the client starts the server (a fresh Error Memory per run)."""
    env = {
        "GISCLAW_CONFIG": "/nonexistent/gisclaw-test-config.toml",
        "GISCLAW_ERROR_MEMORY": os.path.join(workdir, "..", "memory.json"),
    }
    if "GISCLAW_KNOWLEDGE" in os.environ:
        env["GISCLAW_KNOWLEDGE"] = os.environ["GISCLAW_KNOWLEDGE"]
    env.update(extra_env or {})
    return StdioServerParameters(
        command=gisclaw,
        args=["mcp", "--data", data, "--workdir", workdir, "--cell-timeout", "60", *extra_args],
        env=env,
    )


def server_pid(workdir):
    """The pid of the `gisclaw mcp` serving `workdir` (from /proc)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                args = fh.read().split(b"\0")
        except OSError:
            continue
        if b"mcp" in args and workdir.encode() in args:
            return int(entry)
    raise AssertionError(f"no gisclaw mcp process for {workdir}")


def text_of(result):
    """The text blocks of a tool result, joined."""
    return "\n".join(block.text for block in result.content if block.type == "text")


async def call(session, tool, args=None, **kw):
    """Calls a tool and returns (is_error, text, result)."""
    result = await session.call_tool(tool, args or {}, **kw)
    return bool(result.is_error), text_of(result), result


async def run_ok(session, code):
    """Runs a cell that must succeed; returns its text."""
    failed, text, _ = await call(session, "execute_python", {"code": code})
    assert not failed, f"cell failed: {code!r}\n{text}"
    return text


async def still_works(session):
    """The session still runs code and keeps its variables."""
    text = await run_ok(session, "alive = 6 * 7\nprint(alive)")
    assert "42" in text, text
    text = await run_ok(session, "print(alive + 1)")
    assert "43" in text, text


async def scenario_tools(session, ctx):
    listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    expected = {
        "list_files",
        "inspect_data",
        "execute_python",
        "list_variables",
        "reset_session",
        "save_script",
    }
    assert expected <= set(tools), sorted(tools)
    assert "search_docs" not in tools, "search_docs offered without --rag"
    schema = tools["execute_python"].input_schema
    assert schema["properties"]["code"]["type"] == "string", schema
    assert schema.get("required") == ["code"], schema
    for tool in tools.values():
        assert len(tool.description or "") > 40, f"{tool.name}: {tool.description!r}"
    info = session.initialize_result
    return {
        "tools": sorted(tools),
        "server": info.server_info.name if info else None,
        "instructions": (info.instructions or "") if info else "",
    }


async def scenario_analysis(session, ctx):
    """A small GIS analysis across several calls, state kept between them."""
    failed, card, _ = await call(session, "inspect_data")
    assert not failed and "stations.csv" in card and "city_boundary" in card, card
    failed, one, _ = await call(session, "inspect_data", {"path": "data/city_boundary.geojson"})
    assert not failed and "EPSG" in one, one
    failed, files, _ = await call(session, "list_files")
    assert not failed and "stations.csv" in files, files

    await run_ok(
        session,
        "import geopandas as gpd, pandas as pd\n"
        "city = gpd.read_file('data/city_boundary.geojson')\n"
        "df = pd.read_csv('data/stations.csv')\n"
        "print(len(city), len(df))",
    )
    text = await run_ok(
        session,
        "pts = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df.iloc[:, 1], df.iloc[:, 2]),"
        " crs=4326)\n"
        "print('stations', len(pts))",
    )
    assert "stations" in text, text
    failed, variables, _ = await call(session, "list_variables")
    assert not failed and "pts" in variables and "city" in variables, variables

    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    failed, text, result = await call(
        session,
        "execute_python",
        {
            "code": "import time, matplotlib\nmatplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "ax = city.plot(color='lightgrey')\npts.plot(ax=ax, color='red')\n"
            "print('drawing the map', flush=True)\n"
            "time.sleep(2.5)\n"
            "plt.savefig('pred_results/stations_map.png')\nprint('saved')"
        },
        progress_callback=on_progress,
    )
    assert not failed, text
    images = [block for block in result.content if block.type == "image"]
    assert images, f"no image came back: {[b.type for b in result.content]}"
    png = base64.b64decode(images[0].data)
    assert png.startswith(b"\x89PNG") and images[0].mime_type == "image/png"
    assert progress, "no progress notification during a 2.5 s cell"
    # The line printed before the wait came with the progress, while it ran.
    assert any("drawing the map" in (m or "") for _, _, m in progress), progress

    resources = await session.list_resources()
    uris = [str(r.uri) for r in resources.resources]
    assert "gisclaw://transcript" in uris, uris
    map_uri = next(u for u in uris if u.endswith("stations_map.png"))
    read = await session.read_resource(map_uri)
    blob = base64.b64decode(read.contents[0].blob)
    assert blob.startswith(b"\x89PNG"), read.contents[0].mime_type
    transcript = await session.read_resource("gisclaw://transcript")
    assert "execute_python" in transcript.contents[0].text
    # The data's card, as the model reads it and as data.
    card_text = (await session.read_resource("gisclaw://card")).contents[0].text
    card = json.loads((await session.read_resource("gisclaw://card.json")).contents[0].text)
    card_paths = [d["path"] for d in card["datasets"]]
    assert all(p in card_text for p in card_paths), (card_paths, card_text)

    failed, text, _ = await call(session, "save_script")
    assert not failed, text
    with open(os.path.join(ctx["workdir"], "solution.py"), encoding="utf-8") as fh:
        script = fh.read()
    assert "points_from_xy" in script and "savefig" in script, script

    # A failing cell gets the agent's hints: static analysis names the real
    # API, and Error Memory the fix that worked after the same error.
    failed, text, _ = await call(session, "execute_python", {"code": "gpd.read_fil('x')"})
    assert failed and "read_file" in text, text
    # The fix runs the failing statement again, corrected (an unrelated
    # cell would not be remembered as its fix).
    await run_ok(session, "if False:\n    gpd.read_file('x')")
    failed, text, _ = await call(session, "execute_python", {"code": "gpd.read_fil('y')"})
    assert failed and "[error memory]" in text, text

    failed, text, _ = await call(session, "reset_session")
    assert not failed, text
    failed, text, _ = await call(session, "execute_python", {"code": "print(pts)"})
    assert failed and "NameError" in text, text
    return {
        "progress": len(progress),
        "image_bytes": len(png),
        "resources": uris,
        "card_datasets": card_paths,
        "script_lines": script.count("\n"),
    }


async def scenario_cancel(session, ctx):
    """A running cell cancelled from the client; the session lives on."""
    await run_ok(session, "kept = 'before'\nprint(kept)")
    started = anyio.current_time()
    with anyio.move_on_after(3) as scope:
        await session.call_tool("execute_python", {"code": "while True:\n    pass"})
    assert scope.cancel_called, "the endless cell returned"
    # The next call waits for the interrupted cell, then runs.
    text = await run_ok(session, "print(kept, 6 * 7)")
    assert "before 42" in text, text
    waited = anyio.current_time() - started
    assert waited < 30, f"the interrupted cell held the session for {waited:.1f} s"
    with open(os.path.join(ctx["workdir"], "transcript.jsonl"), encoding="utf-8") as fh:
        events = [json.loads(line) for line in fh]
    # Each client call is a `tool` event, its code in the call's arguments.
    code = lambda e: json.loads(e.get("arguments") or "{}").get("code", "")
    endless = next(e for e in events if e.get("name") == "execute_python" and code(e).startswith("while True"))
    assert "KeyboardInterrupt" in endless["observation"], endless
    return {"after_cancel": "before 42", "seconds": round(waited, 1)}


async def scenario_hostile(session, ctx):
    """The sandbox tests' hostile cells, sent as a hostile model would."""
    seen = {}
    # The server's environment holds an API key; no cell may find it.
    failed, text, _ = await call(
        session,
        "execute_python",
        {
            "code": "import os, glob\nfound = []\n"
            "for path in glob.glob('/proc/*/environ') + ['/proc/self/environ']:\n"
            "    try:\n"
            "        if b'sk-mcp-secret-4242' in open(path, 'rb').read():\n"
            "            found.append(path)\n"
            "    except Exception:\n"
            "        pass\n"
            "print('found', found, 'in environ', 'sk-mcp-secret-4242' in str(os.environ))"
        },
    )
    assert "found [] in environ False" in text, text
    seen["api_key"] = "unreadable"
    await still_works(session)

    # The user's home (config files, keys) is out of reach.
    failed, text, _ = await call(
        session,
        "execute_python",
        {"code": f"print(open({ctx['secret']!r}).read())"},
    )
    assert failed and "sk-home" not in text, text
    seen["home"] = "unreadable"
    await still_works(session)

    # No network: a listener on the host gets no connection.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    failed, text, _ = await call(
        session,
        "execute_python",
        {
            "code": "import socket\ns = socket.socket()\ns.settimeout(3)\n"
            f"s.connect(('127.0.0.1', {port}))\nprint('connected')"
        },
    )
    assert failed and "connected" not in text.split("Error")[0], text
    try:
        listener.accept()
        raise AssertionError("a connection arrived from the sandbox")
    except BlockingIOError:
        pass
    seen["network"] = "refused"
    await still_works(session)

    # Writes outside the session's folder fail, the data is read-only.
    outside = ctx["outside"]
    failed, text, _ = await call(
        session,
        "execute_python",
        {"code": f"open({outside!r}, 'w').write('owned')"},
    )
    assert not os.path.exists(outside), f"a cell wrote {outside}: {text}"
    seen["write_outside"] = "refused" if failed else "went to the session's private view"
    failed, text, _ = await call(
        session,
        "execute_python",
        {"code": "open('data/stations.csv', 'w').write('owned')"},
    )
    assert failed, text
    with open(os.path.join(ctx["data"], "stations.csv"), encoding="utf-8") as fh:
        assert "owned" not in fh.read()
    seen["writes"] = "refused"
    await still_works(session)

    # A cell that kills its own worker: reported, and the session restarts.
    failed, text, _ = await call(session, "execute_python", {"code": "import os\nos._exit(3)"})
    assert failed and "WorkerCrashed" in text and "the namespace is back" in text, text
    seen["crash"] = "recovered"
    await still_works(session)

    # A cell that tries to kill the server it runs under.
    failed, text, _ = await call(
        session,
        "execute_python",
        {"code": f"import os, signal\nos.kill({ctx['server_pid']}, signal.SIGKILL)"},
    )
    assert failed, text
    await still_works(session)
    return seen


async def scenario_bad_requests(session, ctx):
    """Bad requests get MCP errors; the server answers the next call."""
    errors = {}
    for name, tool, args in [
        ("unknown_tool", "rm_rf", {}),
        ("wrong_type", "execute_python", {"code": 5}),
        ("missing_arg", "execute_python", {}),
        ("extra_arg", "execute_python", {"code": "1", "shell": True}),
        ("oversized", "execute_python", {"code": "x = 1\n" * 3_000_000}),
        ("bad_path", "inspect_data", {"path": "../../etc/passwd"}),
    ]:
        try:
            result = await session.call_tool(tool, args)
            assert result.is_error, f"{name}: no error: {text_of(result)[:200]}"
            errors[name] = "tool error: " + text_of(result)[:160]
        except Exception as err:  # an MCP protocol error
            errors[name] = "protocol error: " + str(err)[:160]
    # Over the server's message limit: dropped unanswered (it cannot be
    # parsed for its id), and the server goes on.
    try:
        await session.call_tool(
            "execute_python", {"code": "#" * (65 * 1024 * 1024)}, read_timeout_seconds=5
        )
        raise AssertionError("a message over the limit was answered")
    except Exception as err:
        errors["over_message_limit"] = "no answer: " + str(err)[:160]
    try:
        await session.read_resource("gisclaw://pred_results/..%2F..%2Fetc%2Fpasswd")
        raise AssertionError("a resource outside pred_results was read")
    except Exception as err:
        errors["bad_resource"] = "protocol error: " + str(err)[:160]
    await still_works(session)
    return {"errors": errors}


async def scenario_rag(session, ctx):
    """With --rag: search_docs, and library docs for a wrong API."""
    listed = await session.list_tools()
    assert "search_docs" in {tool.name for tool in listed.tools}
    failed, hits, _ = await call(session, "search_docs", {"query": "burn polygons into a raster"})
    assert not failed and "rasterio.features.rasterize" in hits, hits
    failed, text, _ = await call(
        session, "execute_python", {"code": "from shapely.ops import cascaded_union"}
    )
    assert failed and "[library docs for" in text, text
    return {"hits": hits.splitlines()[:3], "wrong_api": text[text.index("[library docs"):][:300]}


async def scenario_relocated(session, ctx):
    """The server as a desktop client starts it: the SDK's reduced
    environment (no XDG_DATA_HOME) and a HOME whose data home holds no
    gisclaw. It finds its install from what `make setup` recorded, imports
    modules the zygote did not preload, and reads the data's card."""
    text = await run_ok(
        session,
        "import pandas.io.formats.string, pyproj.transformer, geopandas\n"
        "print('imported', geopandas.__version__)",
    )
    assert "imported" in text, text
    card = (await session.read_resource("gisclaw://card")).contents[0].text
    assert "file(s) in `data/`" in card and "could not check" not in card, card
    return {"printed": text.strip()[:80], "card": card.splitlines()[0]}


SCENARIOS = {
    "relocated": scenario_relocated,
    "rag": scenario_rag,
    "tools": scenario_tools,
    "analysis": scenario_analysis,
    "cancel": scenario_cancel,
    "hostile": scenario_hostile,
    "bad_requests": scenario_bad_requests,
}


async def two_clients(gisclaw, data, workdir):
    """Two clients at once, each with its own session."""
    one = params(gisclaw, data, os.path.join(workdir, "one"))
    two = params(gisclaw, data, os.path.join(workdir, "two"))
    async with stdio_client(one) as (r1, w1), stdio_client(two) as (r2, w2):
        async with ClientSession(r1, w1) as s1, ClientSession(r2, w2) as s2:
            await s1.initialize()
            await s2.initialize()
            await run_ok(s1, "who = 'one'")
            await run_ok(s2, "who = 'two'")
            first = await run_ok(s1, "print(who)")
            second = await run_ok(s2, "print(who)")
            assert "one" in first and "two" in second, (first, second)
    return {"one": first.strip(), "two": second.strip()}


async def over_http(url):
    """Two clients of one `gisclaw mcp --http` server: separate sessions,
    state kept across calls, progress and cancellation over HTTP."""
    headers = {"Authorization": f"Bearer {os.environ['MCP_TEST_TOKEN']}"}
    c1, c2 = create_mcp_http_client(headers=headers), create_mcp_http_client(headers=headers)
    async with c1, c2, streamable_http_client(url, http_client=c1) as (r1, w1), streamable_http_client(
        url, http_client=c2
    ) as (r2, w2):
        async with ClientSession(r1, w1) as s1, ClientSession(r2, w2) as s2:
            first = await s1.initialize()
            await s2.initialize()
            await run_ok(s1, "who = 'one'")
            await run_ok(s2, "who = 'two'")
            progress = []

            async def on_progress(value, total, message):
                progress.append(value)

            failed, one, _ = await call(
                s1,
                "execute_python",
                {"code": "import time\ntime.sleep(2.5)\nprint(who)"},
                progress_callback=on_progress,
            )
            assert not failed and "one" in one, one
            assert progress, "no progress over HTTP"
            with anyio.move_on_after(2):
                await s2.call_tool("execute_python", {"code": "while True:\n    pass"})
            two = await run_ok(s2, "print(who)")
            assert "two" in two, two
            await still_works(s1)
    return {
        "one": one.strip(),
        "two": two.strip(),
        "progress": len(progress),
        "protocol": first.protocol_version,
    }


async def main():
    scenario, gisclaw, data, workdir = sys.argv[1:5]
    if scenario == "http":
        print(json.dumps({"ok": True, **await over_http(os.environ["MCP_TEST_URL"])}))
        return
    if scenario == "two_clients":
        print(json.dumps({"ok": True, **await two_clients(gisclaw, data, workdir)}))
        return
    ctx = {
        "data": data,
        "workdir": workdir,
        "secret": os.environ.get("MCP_TEST_SECRET", ""),
        "outside": os.environ.get("MCP_TEST_OUTSIDE", ""),
    }
    extra = {"OPENAI_API_KEY": "sk-mcp-secret-4242"} if scenario == "hostile" else {}
    if scenario == "relocated":
        extra = {"HOME": os.environ["MCP_TEST_HOME"]}
    args = ["--rag"] if scenario == "rag" else []
    async with stdio_client(params(gisclaw, data, workdir, extra, args)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            ctx["server_pid"] = server_pid(workdir)
            observed = await SCENARIOS[scenario](session, ctx)
    print(json.dumps({"ok": True, **observed}))


if __name__ == "__main__":
    anyio.run(main)
