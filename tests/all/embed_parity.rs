//! The in-process MiniLM embedder (gisclaw-encoder) against an independent
//! float64 numpy implementation of the same BERT forward pass, run with the
//! sandbox venv's Python on the same weights file and token ids; plus the
//! tokenizer on ids known from BERT's uncased vocabulary and the model's
//! behaviour on sentences whose similarity order is not in doubt.

use std::process::Command;

use gisclaw::embed::{cosine, default_model_dir, Embedder};

/// A float64 numpy forward pass of a BERT sentence embedder: reads the
/// safetensors file by its documented layout (u64 header length, JSON
/// header, little-endian data), embeds each id list of stdin's JSON with
/// `[CLS]`/`[SEP]` added, mean-pools and L2-normalises.
const NUMPY_BERT: &str = r#"
import json, struct, sys
import numpy as np
from scipy.special import erf

model_dir, cls, sep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
config = json.load(open(model_dir + "/config.json"))
raw = open(model_dir + "/model.safetensors", "rb").read()
header_len = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + header_len])
weights = {}
for name, meta in header.items():
    if name == "__metadata__" or meta["dtype"] != "F32":  # e.g. an I64 position_ids buffer
        continue
    start, end = meta["data_offsets"]
    array = np.frombuffer(raw[8 + header_len + start:8 + header_len + end], dtype="<f4")
    weights[name.removeprefix("bert.")] = array.reshape(meta["shape"]).astype(np.float64)

eps = config["layer_norm_eps"]
heads = config["num_attention_heads"]

def norm(x, prefix):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weights[prefix + ".weight"] + weights[prefix + ".bias"]

def dense(x, prefix):
    return x @ weights[prefix + ".weight"].T + weights[prefix + ".bias"]

def embed(ids):
    ids = [cls] + ids + [sep]
    n = len(ids)
    x = weights["embeddings.word_embeddings.weight"][ids] \
        + weights["embeddings.position_embeddings.weight"][:n] \
        + weights["embeddings.token_type_embeddings.weight"][0]
    x = norm(x, "embeddings.LayerNorm")
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        d = x.shape[1] // heads
        split = lambda t: t.reshape(n, heads, d).transpose(1, 0, 2)
        q, k, v = (split(dense(x, p + "attention.self." + w)) for w in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, heads * d)
        x = norm(dense(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = dense(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))
        x = norm(dense(h, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = x.mean(0)
    return (pooled / np.linalg.norm(pooled)).tolist()

print(json.dumps([embed(ids) for ids in json.load(sys.stdin)]))
"#;

fn embedder() -> Embedder {
    let dir = default_model_dir().expect("the MiniLM model is installed in the venv (make setup)");
    Embedder::load(&dir).expect("the model loads")
}

fn numpy_vectors(embedder: &Embedder, ids: &[Vec<u32>]) -> Vec<Vec<f64>> {
    use std::io::Write;
    let python = gisclaw::paths::default_venv().join("bin/python");
    let cls = embedder.token_ids("[CLS]").unwrap()[0];
    let sep = embedder.token_ids("[SEP]").unwrap()[0];
    let mut child = Command::new(python)
        .arg("-c")
        .arg(NUMPY_BERT)
        .arg(embedder.dir())
        .arg(cls.to_string())
        .arg(sep.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the venv's python runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(ids).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_tokenizer_gives_bert_uncased_ids() {
    let e = embedder();
    // bert-base-uncased: hello 7592, "," 1010, world 2088, "!" 999; [CLS] 101, [SEP] 102.
    assert_eq!(
        e.token_ids("Hello, world!").unwrap(),
        vec![7592, 1010, 2088, 999]
    );
    assert_eq!(e.token_ids("[CLS]").unwrap(), vec![101]);
    assert_eq!(e.token_ids("[SEP]").unwrap(), vec![102]);
}

#[test]
fn vectors_match_a_numpy_forward_pass() {
    let e = embedder();
    let texts = [
        "Buffer the rivers by 500 m and intersect with the parcels.",
        "gdf = gpd.read_file('data/roads.shp').to_crs(32633)\nprint(gdf.crs, len(gdf))",
        "Traceback (most recent call last):\nKeyError: 'Temp_C'",
        "x",
    ];
    let ids: Vec<Vec<u32>> = texts.iter().map(|t| e.token_ids(t).unwrap()).collect();
    let ours = e.embed(&texts).unwrap();
    let reference = numpy_vectors(&e, &ids);
    for (k, (a, b)) in ours.iter().zip(&reference).enumerate() {
        assert_eq!(a.len(), 384);
        let worst = a
            .iter()
            .zip(b)
            .map(|(x, y)| (f64::from(*x) - y).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-5, "text {k}: largest difference {worst}");
    }
}

#[test]
fn a_query_in_half_precision_keeps_the_direction_of_the_numpy_vector() {
    // The search embeds queries with half-precision weights: each vector
    // must stay within a hair of the float64 reference, and differ from
    // the full-precision one (else the half kernel did not run).
    let e = embedder();
    let queries = [
        "clip a raster by a polygon",
        "AttributeError: 'GeoSeries' object has no attribute 'cascaded_union'",
        "geographically weighted regression bandwidth",
    ];
    let ids: Vec<Vec<u32>> = queries.iter().map(|t| e.token_ids(t).unwrap()).collect();
    let reference = numpy_vectors(&e, &ids);
    let mut differs = false;
    for (q, want) in queries.iter().zip(&reference) {
        let half = e.embed_query(q).unwrap();
        let full = e.embed(&[q]).unwrap().remove(0);
        let cos: f64 = half.iter().zip(want).map(|(x, y)| f64::from(*x) * y).sum();
        assert!(cos > 0.9999, "{q}: cosine {cos}");
        differs |= half != full;
    }
    if gisclaw_encoder::matmul::has_f16c() {
        assert!(differs, "the half-precision kernel did not run");
    }
}

#[test]
fn a_long_document_is_the_token_weighted_mean_of_its_windows() {
    let e = embedder();
    let sentence = "The kriging surface of air temperature is clipped to the city boundary and saved as a GeoTIFF. ";
    let text = sentence.repeat(30);
    let ids = e.token_ids(&text).unwrap();
    assert!(ids.len() > 254 * 2, "{} tokens", ids.len());
    let windows: Vec<Vec<u32>> = ids.chunks(254).map(<[u32]>::to_vec).collect();
    let parts = numpy_vectors(&e, &windows);
    let mut expected = vec![0.0f64; 384];
    for (w, v) in windows.iter().zip(&parts) {
        for (s, x) in expected.iter_mut().zip(v) {
            *s += x * w.len() as f64;
        }
    }
    let norm = expected.iter().map(|x| x * x).sum::<f64>().sqrt();
    let ours = e.embed_document(&text).unwrap();
    let worst = ours
        .iter()
        .zip(&expected)
        .map(|(x, y)| (f64::from(*x) - y / norm).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-5, "largest difference {worst}");
    // A text of one window: the same vector as `embed`.
    let short = e.embed_document(sentence).unwrap();
    assert_eq!(short, e.embed(&[sentence]).unwrap()[0]);
}

#[test]
fn related_texts_are_closer_than_unrelated_ones() {
    let e = embedder();
    let v = e
        .embed(&[
            "Interpolate the station temperatures onto a raster grid.",
            "Create a temperature surface from weather station points by interpolation.",
            "The recipe needs two eggs and a cup of flour.",
        ])
        .unwrap();
    let (near, far) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!(
        near > 0.5 && far < 0.2 && near > far + 0.3,
        "near {near}, far {far}"
    );
}

#[test]
fn the_published_similarities_of_the_sentence_transformers_quickstart() {
    // sentence-transformers' quickstart prints these similarities for
    // all-MiniLM-L6-v2 on these three sentences: 0.6660, 0.1046, 0.1411.
    let e = embedder();
    let v = e
        .embed(&[
            "The weather is lovely today.",
            "It's so sunny outside!",
            "He drove to the stadium.",
        ])
        .unwrap();
    for ((a, b), want) in [((0, 1), 0.6660), ((0, 2), 0.1046), ((1, 2), 0.1411)] {
        let got = cosine(&v[a], &v[b]);
        assert!(
            (got - want).abs() < 5e-4,
            "sentences {a} and {b}: {got}, published {want}"
        );
    }
}

#[test]
fn a_padded_batch_gives_the_vectors_of_one_text_at_a_time() {
    let embedder = embedder();
    let texts = [
        "Clip a raster by a polygon.",
        "rasterio.features.rasterize: Return an image array with input geometries burned in, one pixel per shape, for every shape of a long list of shapes that the caller gives.",
        "numpy.gradient",
        "",
    ];
    let one_by_one = embedder.embed(&texts).unwrap();
    for batch in [1, 2, 4] {
        let batched = embedder.embed_batch(&texts, batch).unwrap();
        assert_eq!(batched.len(), texts.len());
        for (a, b) in one_by_one.iter().zip(&batched) {
            let c = cosine(a, b);
            assert!(c > 0.9999, "batch {batch}: cosine {c}");
        }
    }
}
