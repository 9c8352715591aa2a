//! Vision feedback against scripted OpenAI and Ollama servers on 127.0.0.1:
//! the figure a cell writes reaches a model whose profile says it sees
//! images (downscaled, as an image part or Ollama `images`), never a
//! text-only one nor with `--no-vision-feedback`; `vision = "auto"` asks
//! once with a red square and remembers the answer; run.json counts the
//! images and their tokens.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::fake_llm::{
    ollama_answer, ollama_code, openai_answer, openai_code, FakeServer, Reply,
};
use crate::common::{self, gisclaw, repo, text};

/// A cell that draws a 1200×900 map with a legend.
const MAP: &str = "stations = pd.read_csv('data/stations.csv')\nfig, ax = plt.subplots(figsize=(12, 9))\nax.scatter(stations.easting, stations.northing, c=stations.temp_c, label='stations')\nax.legend()\nplt.savefig('pred_results/temperature_map.png', dpi=100)\nimport numpy as np, rasterio\nfrom rasterio.transform import from_origin\nwith rasterio.open('pred_results/temperature.tif', 'w', driver='GTiff', width=20, height=20, count=1, dtype='float32', crs='EPSG:32617', transform=from_origin(stations.easting.min(), stations.northing.max(), 100, 100)) as d:\n    d.write(np.arange(400, dtype='float32').reshape(20, 20), 1)";

fn openai_finish() -> Value {
    openai_answer(json!({
        "role": "assistant", "content": null,
        "tool_calls": [{ "id": "f", "type": "function", "function": { "name": "finish", "arguments": "{\"summary\": \"done\"}" } }]
    }))
}

/// `gisclaw solve` of the heat-island task with profile `p` of `config`.
fn solve(
    config: &Path,
    profile: &str,
    out: &Path,
    extra: &[&str],
    cache: &Path,
) -> std::process::Output {
    let task = repo().join("examples/heat_island/task.yaml");
    let mut args = vec![
        "solve",
        task.to_str().unwrap(),
        "--backend",
        profile,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    gisclaw(
        &args,
        &[
            ("GISCLAW_CONFIG", config.to_str().unwrap()),
            ("XDG_CACHE_HOME", cache.to_str().unwrap()),
        ],
    )
}

fn config(dir: &Path, kind: &str, url: &str, vision: &str) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!("[profiles.p]\nkind = \"{kind}\"\nbase_url = \"{url}\"\nmodel = \"fake\"\napi_key = \"k\"\nvision = {vision}\n"),
    )
    .unwrap();
    path
}

/// The base64 PNGs of OpenAI image parts in a request's messages.
fn openai_images(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|p| p["type"] == "image_url")
        .map(|p| p["image_url"]["url"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_vision_model_sees_its_figure_and_a_text_model_or_the_ablation_does_not() {
    for (vision, extra, shown) in [
        ("true", &[][..], true),
        ("false", &[][..], false),
        ("true", &["--no-vision-feedback"][..], false),
    ] {
        let server = FakeServer::start(vec![
            Reply::Json(200, openai_code("c1", MAP)),
            Reply::Json(200, openai_finish()),
        ]);
        let dir = common::workdir();
        let cfg = config(dir.path(), "openai", &format!("{}/v1", server.url), vision);
        let out = dir.path().join("out");
        let run = solve(&cfg, "p", &out, extra, dir.path());
        assert_eq!(run.status.code(), Some(0), "{}", text(&run));
        let requests = server.requests();
        let chats: Vec<&Value> = requests
            .iter()
            .filter(|r| r.line.contains("/chat/completions"))
            .map(|r| &r.body)
            .collect();
        assert_eq!(chats.len(), 2, "vision={vision} {extra:?}");
        let images = openai_images(chats[1]);
        let summary = common::run_json(&out);
        if shown {
            assert_eq!(images.len(), 1, "{}", chats[1]);
            assert!(images[0].starts_with("data:image/png;base64,"));
            // Downscaled: 1200×900 → 768×576.
            let png = base64_decode(images[0].trim_start_matches("data:image/png;base64,"));
            assert_eq!(
                &png[16..24],
                &[0, 0, 3, 0, 0, 0, 2, 64],
                "768×576 in the IHDR"
            );
            let text = chats[1]["messages"].as_array().unwrap().last().unwrap()["content"][0]
                ["text"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(
                text.contains("pred_results/temperature_map.png (768×576 px)"),
                "{text}"
            );
            assert_eq!(summary["images_shown"], 1);
            assert_eq!(summary["image_tokens"], 85 + 170 * 4);
            // The transcript names the figure, without its pixels.
            let transcript = common::records::checked(&out.join("transcript.jsonl"));
            assert!(!transcript.contains("base64,"), "pixels in the transcript");
            assert!(transcript
                .contains("\"images\":[\"pred_results/temperature_map.png (768×576 px)\"]"));
        } else {
            assert!(images.is_empty(), "vision={vision} {extra:?}: {}", chats[1]);
            assert_eq!(summary["images_shown"], 0);
        }
    }
}

#[test]
fn an_ollama_vision_model_gets_the_figure_in_images() {
    let server = FakeServer::start(vec![
        Reply::Json(200, ollama_code(MAP)),
        Reply::Json(
            200,
            ollama_answer(
                json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "finish", "arguments": {"summary": "done"}}}]}),
            ),
        ),
    ]);
    let dir = common::workdir();
    let cfg = config(dir.path(), "ollama", &server.url, "true");
    let out = dir.path().join("out");
    let run = solve(&cfg, "p", &out, &[], dir.path());
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let requests = server.requests();
    let chats: Vec<&Value> = requests
        .iter()
        .filter(|r| r.line.contains("/api/chat"))
        .map(|r| &r.body)
        .collect();
    let last = chats[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["images"].as_array().map(Vec::len), Some(1), "{last}");
    assert!(chats[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m.get("images").is_none_or(Value::is_null)));
}

#[test]
fn auto_asks_once_with_a_red_square_and_remembers() {
    let dir = common::workdir();
    let server = FakeServer::start(vec![
        Reply::Json(200, openai_code("c1", MAP)),
        Reply::Json(
            200,
            openai_answer(json!({"role": "assistant", "content": "Red."})),
        ),
        Reply::Json(200, openai_finish()),
        // The second run: no probe.
        Reply::Json(200, openai_code("c1", MAP)),
        Reply::Json(200, openai_finish()),
    ]);
    let cfg = config(
        dir.path(),
        "openai",
        &format!("{}/v1", server.url),
        "\"auto\"",
    );
    let first = solve(&cfg, "p", &dir.path().join("a"), &[], dir.path());
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let second = solve(&cfg, "p", &dir.path().join("b"), &[], dir.path());
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let chats: Vec<Value> = server
        .requests()
        .into_iter()
        .filter(|r| r.line.contains("/chat/completions"))
        .map(|r| r.body)
        .collect();
    assert_eq!(chats.len(), 5);
    let probe = &chats[1];
    assert_eq!(probe["messages"].as_array().unwrap().len(), 1, "{probe}");
    assert!(
        probe
            .get("tools")
            .is_none_or(|t| t.is_null() || t.as_array().is_some_and(Vec::is_empty)),
        "{probe}"
    );
    assert_eq!(openai_images(probe).len(), 1);
    assert_eq!(
        openai_images(&chats[2]).len(),
        1,
        "the figure after the probe"
    );
    assert_eq!(
        openai_images(&chats[4]).len(),
        1,
        "remembered: no second probe"
    );
    let remembered = std::fs::read_to_string(dir.path().join("gisclaw/vision.json")).unwrap();
    assert!(remembered.contains("|fake\": true"), "{remembered}");
}

/// Standard base64 decoding (test helper).
fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}
