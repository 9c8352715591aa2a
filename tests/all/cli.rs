//! The `gisclaw` binary as a user runs it.

use crate::common;

use common::gisclaw;

fn script(dir: &tempfile::TempDir, body: &str) -> String {
    let path = dir.path().join("script.py");
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn exec_runs_cells_in_one_session_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let file = script(&dir, "a = 2\n# %%\nprint(a * 21)\n");
    let work = dir.path().join("work");
    let out = gisclaw(&["exec", &file, "--workdir", work.to_str().unwrap()], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("── cell 2") && stdout.contains("\n42\n"),
        "{stdout}"
    );
    assert!(work.join("pred_results").is_dir());
}

#[test]
fn exec_exits_one_when_a_cell_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = script(&dir, "raise ValueError('bad input data')\n");
    let work = dir.path().join("work");
    let out = gisclaw(&["exec", &file, "--workdir", work.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ValueError: bad input data"));
}

#[test]
fn api_keys_never_reach_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let file = script(
        &dir,
        "import os\nprint(sorted(k for k in os.environ if 'KEY' in k or 'TOKEN' in k))\n",
    );
    let work = dir.path().join("work");
    let out = gisclaw(
        &["exec", &file, "--workdir", work.to_str().unwrap()],
        &[
            ("OPENAI_API_KEY", "sk-test-secret"),
            ("HF_TOKEN", "hf-secret"),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("[]"), "{stdout}");
    assert!(!stdout.contains("secret"), "{stdout}");
}

#[test]
fn a_missing_venv_is_one_line_with_the_fix_and_exit_two() {
    let dir = tempfile::tempdir().unwrap();
    let file = script(&dir, "print(1)\n");
    let out = gisclaw(&["exec", &file], &[("GISCLAW_VENV", "/nonexistent/venv")]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("/nonexistent/venv") && stderr.contains("make setup"),
        "{stderr}"
    );
}

#[test]
fn a_missing_script_names_the_file() {
    let out = gisclaw(&["exec", "/nonexistent/script.py"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/nonexistent/script.py"), "{stderr}");
}

#[test]
fn doctor_reports_the_stack_and_confinement() {
    let out = gisclaw(&["doctor"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for needle in [
        "geopandas",
        "rasterio",
        "mgwr",
        "python",
        "confinement",
        "all good",
    ] {
        assert!(stdout.contains(needle), "{needle} missing from:\n{stdout}");
    }
}

#[test]
fn doctor_names_the_fix_for_a_missing_venv() {
    let out = gisclaw(&["doctor"], &[("GISCLAW_VENV", "/nonexistent/venv")]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("MISSING") && stdout.contains("make setup"),
        "{stdout}"
    );
}

#[test]
fn cells_are_interrupted_even_when_gisclaw_starts_with_sigint_ignored() {
    // A background job of a shell without job control (a CI script, nohup)
    // starts with SIGINT ignored; the worker must still turn the timeout's
    // SIGINT into KeyboardInterrupt instead of being killed.
    let dir = tempfile::tempdir().unwrap();
    let file = script(
        &dir,
        "kept = 1\n# %%\nwhile True:\n    pass\n# %%\nprint('after', kept)\n",
    );
    let work = dir.path().join("work");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#"trap "" INT; exec "$0" exec "$1" --workdir "$2" --cell-timeout 2"#)
        .arg(env!("CARGO_BIN_EXE_gisclaw"))
        .arg(&file)
        .arg(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("limit and was interrupted"), "{stdout}");
    assert!(stdout.contains("after 1"), "{stdout}");
}

#[test]
fn a_required_layer_that_is_missing_refuses_the_session_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = script(&dir, "print('ran')\n");
    let work = dir.path().join("work");
    let work = work.to_str().unwrap();
    // --no-confine turns Landlock and seccomp off: requiring them refuses.
    let out = gisclaw(
        &[
            "exec",
            &file,
            "--workdir",
            work,
            "--no-confine",
            "--require-confinement=landlock",
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("gisclaw: the sandbox requires landlock, which is not in force here:")
            && stderr.trim_end().lines().count() == 1,
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
    // The same from the config file; an unknown layer names file and line.
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[sandbox]\nrequire = [\"seccomp\"]\n").unwrap();
    let cfg = [("GISCLAW_CONFIG", config.to_str().unwrap())];
    let out = gisclaw(&["exec", &file, "--workdir", work, "--no-confine"], &cfg);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("requires seccomp"));
    std::fs::write(&config, "# sandbox\n[sandbox]\nrequire = [\"landlok\"]\n").unwrap();
    let out = gisclaw(&["exec", &file, "--workdir", work], &cfg);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("config.toml:3:") && stderr.contains("unknown confinement layer `landlok`"),
        "{stderr}"
    );
    // Layers every Linux kernel has run as usual when required.
    let out = gisclaw(
        &[
            "exec",
            &file,
            "--workdir",
            work,
            "--require-confinement=seccomp,no-new-privs,rlimits",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", common::text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ran"));
}

#[test]
fn commands_with_actions_take_them_as_subcommands() {
    // Every command that acts in several ways lists its actions the same way.
    for (command, actions) in [
        ("tree", &["show"][..]),
        ("memory", &["show", "clear"][..]),
        ("sandbox", &["status", "stop"][..]),
        ("transcript", &["to-ipynb"][..]),
        ("knowledge", &["build", "search"][..]),
    ] {
        let help = common::text(&gisclaw(&[command, "--help"], &[]));
        assert!(help.contains("Commands:"), "{command}: {help}");
        for action in actions {
            assert!(
                help.lines().any(|l| l.trim_start().starts_with(action)),
                "{command} {action}: {help}"
            );
        }
    }
    let unknown = gisclaw(&["memory", "forget"], &[]);
    assert_eq!(unknown.status.code(), Some(2));
    let shown = gisclaw(&["tree", "show", "/nonexistent-run"], &[]);
    assert_eq!(shown.status.code(), Some(2), "{}", common::text(&shown));
}

#[test]
fn output_to_a_reader_that_has_gone_ends_quietly_not_with_a_panic() {
    // `gisclaw schema transcript | head -1`, made certain: the reading end
    // is closed before gisclaw writes its first byte.
    for args in [["schema", "transcript"], ["schema", "card"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = common::gisclaw_command(&args, &[])
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
    // And the output is whole when someone reads it.
    let out = gisclaw(&["schema", "transcript"], &[]);
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["title"], "Line");
}
