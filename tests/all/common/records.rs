//! Transcripts read by the tests, each checked first against the JSON
//! Schema `gisclaw schema transcript` prints, by a validator nobody here
//! wrote (the `jsonschema` package of the sandbox's venv, Draft 2020-12).
//! Every test that reads a run's record reads it through [`checked`], so
//! each transcript the suite writes and looks at is validated.

use std::path::Path;
use std::sync::OnceLock;

/// The validator: every line of argv[2] against the schema in argv[1];
/// prints `line N: error` per failing line and exits 1 when any fails.
const VALIDATE: &str = r#"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for n, line in enumerate(open(sys.argv[2], encoding="utf-8"), 1):
    if not line.strip():
        continue
    errors = sorted(validator.iter_errors(json.loads(line)), key=str)
    if errors:
        bad += 1
        print(f"line {n}: {errors[0].message} ({line[:300].strip()})")
print(f"{bad} bad line(s)")
sys.exit(1 if bad else 0)
"#;

/// Where the printed schema is kept for this test process.
fn schema_file() -> &'static Path {
    static FILE: OnceLock<std::path::PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let out = super::gisclaw(&["schema", "transcript"], &[]);
        assert!(out.status.success(), "{}", super::text(&out));
        let path = std::env::temp_dir().join(format!(
            "gisclaw-test-transcript-schema-{}.json",
            std::process::id()
        ));
        std::fs::write(&path, &out.stdout).unwrap();
        path
    })
}

/// Whether every line of the transcript at `path` is valid against the
/// schema: `Err` with the validator's lines when not.
pub fn validate(path: &Path) -> Result<(), String> {
    let out = std::process::Command::new(gisclaw::paths::default_venv().join("bin/python"))
        .args(["-c", VALIDATE])
        .arg(schema_file())
        .arg(path)
        .output()
        .expect("the venv's python runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(())
    } else {
        Err(said)
    }
}

/// The transcript at `path`, after checking every line against the schema.
pub fn checked(path: &Path) -> String {
    if let Err(why) = validate(path) {
        panic!(
            "{} is not valid against `gisclaw schema transcript`:\n{why}",
            path.display()
        );
    }
    std::fs::read_to_string(path).unwrap()
}
