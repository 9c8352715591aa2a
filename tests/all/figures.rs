//! Figures where the user is: `solve` on a terminal that shows images draws
//! each figure a cell writes (iTerm2's inline-image protocol here, known
//! from the environment), names it in one line everywhere else, and never
//! writes an escape code under `NO_COLOR` or to a non-terminal; chat's
//! `/show` draws images, rasters and vector layers in a fork of the session.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::pty::Pty;
use common::{gisclaw_command, repo};

const WAIT: Duration = Duration::from_secs(120);

/// Image protocols' escape sequences: iTerm2, kitty, sixel (DCS … q).
const IMAGE_ESCAPES: [&str; 3] = ["\x1b]1337;File=", "\x1b_G", "\x1bP"];

/// `cmd` without any terminal hint from the developer's environment.
fn plain_terminal(mut cmd: Command) -> Command {
    for var in [
        "NO_COLOR",
        "TERM_PROGRAM",
        "LC_TERMINAL",
        "KITTY_WINDOW_ID",
        "KONSOLE_VERSION",
        "GISCLAW_IMAGES",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("TERM", "xterm-256color");
    cmd
}

fn solve_on_a_pty(out: &std::path::Path, envs: &[(&str, &str)]) -> Pty {
    let task = repo().join("examples/heat_island/task.yaml");
    let cmd = gisclaw_command(
        &[
            "solve",
            task.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let mut cmd = plain_terminal(cmd);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    Pty::spawn(cmd)
}

#[test]
fn solve_draws_figures_on_an_image_terminal_and_names_them_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let line = "figure: pred_results/temperature_map.png (";

    // A terminal that says it is iTerm2: the map is drawn inline.
    let mut pty = solve_on_a_pty(&dir.path().join("iterm"), &[("TERM_PROGRAM", "iTerm.app")]);
    pty.expect(line, WAIT);
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    assert!(pty.seen.contains("\x1b]1337;File="), "{:?}", pty.seen);

    // NO_COLOR on the same terminal: the line only.
    let mut pty = solve_on_a_pty(
        &dir.path().join("no-color"),
        &[("TERM_PROGRAM", "iTerm.app"), ("NO_COLOR", "1")],
    );
    pty.expect(line, WAIT);
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    for escape in IMAGE_ESCAPES {
        assert!(!pty.seen.contains(escape), "{escape:?} in {:?}", pty.seen);
    }

    // A plain terminal with no image protocol: the line only.
    let mut pty = solve_on_a_pty(&dir.path().join("plain"), &[]);
    pty.expect(line, WAIT);
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    for escape in IMAGE_ESCAPES {
        assert!(!pty.seen.contains(escape), "{escape:?} in {:?}", pty.seen);
    }

    // Not a terminal: no escape code at all, the line among the progress.
    let task = repo().join("examples/heat_island/task.yaml");
    let out = dir.path().join("piped");
    let cmd = gisclaw_command(
        &[
            "solve",
            task.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[("TERM_PROGRAM", "iTerm.app")],
    );
    let o = plain_terminal(cmd)
        .env("TERM_PROGRAM", "iTerm.app")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let text = common::text(&o);
    assert!(text.contains(line), "{text}");
    assert!(text.contains("px, "), "{text}");
    assert!(!text.contains('\x1b'), "{text:?}");
}

#[test]
fn chat_show_draws_images_rasters_and_layers_without_touching_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(
        &replay,
        serde_json::json!({"role": "assistant", "content": "unused"}).to_string(),
    )
    .unwrap();
    let data = repo().join("examples/heat_island/data");
    let cmd = gisclaw_command(
        &[
            "chat",
            "--replay",
            replay.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
        &[
            ("GISCLAW_CHATS", dir.path().join("chats").to_str().unwrap()),
            ("NO_COLOR", "1"),
        ],
    );
    let mut cmd = plain_terminal(cmd);
    cmd.env("NO_COLOR", "1")
        .current_dir(dir.path())
        .env_remove("VISUAL");
    let mut pty = Pty::spawn(cmd);
    pty.expect("you> ", WAIT);

    // A raster written by the user's own cell.
    pty.send("/run import numpy as np, rasterio; from rasterio.transform import from_origin; d = rasterio.open('pred_results/t.tif', 'w', driver='GTiff', width=40, height=30, count=1, dtype='float32', crs='EPSG:32617', transform=from_origin(500000, 4400000, 10, 10)); d.write(np.arange(1200, dtype='float32').reshape(30, 40), 1); d.close()\r");
    pty.expect("you> ", WAIT);
    // A terminal without images: the drawing is kept to open, and the data
    // is said in one line.
    pty.send("/show pred_results/t.tif\r");
    pty.expect("quick look of pred_results/t.tif: open ", WAIT);
    pty.expect("quicklook/pred_results_t.tif.png", WAIT);
    pty.expect("pred_results/t.tif — raster (GTiff), 40×30 px", WAIT);
    pty.send("/show data/city_boundary.geojson\r");
    pty.expect("data/city_boundary.geojson — vector (GeoJSON)", WAIT);
    // A table of coordinates is drawn as its points.
    pty.send("/show data/stations.csv\r");
    pty.expect("quick look of data/stations.csv: open ", WAIT);
    pty.send("/show no/such.tif\r");
    pty.expect("/show no/such.tif: ", WAIT);
    // The drawing ran in a fork: the session's journal still holds the
    // one cell, and no drawing is left in the work dir.
    let script = dir.path().join("kept.py");
    pty.send(&format!("/save {}\r", script.display()));
    pty.expect("(1 cells)", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    for escape in IMAGE_ESCAPES {
        assert!(!pty.seen.contains(escape), "{escape:?} in {:?}", pty.seen);
    }
    let leftovers: Vec<_> = walk(&dir.path().join("chats"))
        .into_iter()
        .filter(|p| p.ends_with(".gisclaw-quicklook.png"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                files.extend(walk(&p));
            } else {
                files.push(p.display().to_string());
            }
        }
    }
    files
}
