//! What the confined reader costs (`gisclaw __read`, see `src/reader/`):
//! on the example task (`examples/heat_island`), the data card and the
//! output checks after the cells that write its two outputs, each read
//! through the reader as gisclaw reads them, against the same answer made
//! in this process (`gisclaw::reads::answer_here`: how gisclaw read before
//! the reader). The output checks as a run has them: each check starts the
//! next check's reader (`Standby`), which confines itself while the next
//! cell runs (here: a sleep of that cell's time, outside the timing); and
//! cold, a reader started for the check itself. Then an agent round that
//! writes an output: the writing
//! cell's own time in the sandbox plus its checks, confined against in
//! this process — the goal is at most 10 % slower (a real round
//! also waits for the model, which only makes the share smaller).
//!
//! Run with `make bench` (it builds the release `gisclaw`, which serves as
//! the reader of this release bench) or `cargo bench --bench confined_reader`.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use gisclaw::outputs::sanity::OutputChecks;
use gisclaw::reader::Request;
use gisclaw::reads::answer_here;
use gisclaw::sandbox::{CellStatus, Session, Zygote};

const RUNS: usize = 7;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(mut f: impl FnMut()) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The example's cells that read the data and write its two outputs.
const CELLS: &[&str] = &[
    "stations = pd.read_csv('data/stations.csv')\ncity = gpd.read_file('data/city_boundary.geojson')",
    "from scipy.interpolate import griddata\nfrom rasterio.transform import from_origin\nfrom rasterio.features import geometry_mask\n\
     minx, miny, maxx, maxy = city.total_bounds\nleft, top = np.floor(minx / 100) * 100, np.ceil(maxy / 100) * 100\n\
     width = int(np.ceil((maxx - left) / 100)); height = int(np.ceil((top - miny) / 100))\n\
     transform = from_origin(left, top, 100, 100)\ncols, rows = np.meshgrid(np.arange(width), np.arange(height))\n\
     gx = left + (cols + 0.5) * 100; gy = top - (rows + 0.5) * 100\n\
     surface = griddata(stations[['easting', 'northing']].to_numpy(), stations['temp_c'].to_numpy(), (gx, gy), method='linear')\n\
     inside = geometry_mask(city.geometry, out_shape=(height, width), transform=transform, invert=True)\n\
     surface = np.where(inside, surface, np.nan).astype('float32')\n\
     save_raster('pred_results/temperature.tif', surface, crs=city.crs, transform=transform, nodata=np.nan)",
    "fig, ax = plt.subplots(figsize=(7, 6))\n\
     img = ax.imshow(surface, extent=(left, left + width * 100, top - height * 100, top), cmap='inferno')\n\
     city.boundary.plot(ax=ax, color='white', linewidth=1)\n\
     ax.scatter(stations['easting'], stations['northing'], s=6, c='cyan', label='stations')\n\
     fig.colorbar(img, ax=ax, label='air temperature (C)')\nax.legend(loc='lower left')\n\
     plt.savefig('pred_results/temperature_map.png', dpi=150, bbox_inches='tight')",
];

/// Marks `files` as written again (a new modification time), as the next
/// cell would: their checks read them again.
fn rewritten(pred: &Path, files: &[String]) {
    for name in files {
        let file = std::fs::File::options()
            .write(true)
            .open(pred.join(name))
            .unwrap();
        file.set_modified(std::time::SystemTime::now()).unwrap();
    }
}

fn main() {
    common::refuse_a_stale_worker();
    println!("reader: {}", gisclaw::paths::default_reader().display());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = root.join("examples/heat_island/data");
    let task_text = std::fs::read_to_string(root.join("examples/heat_island/task.yaml")).unwrap();

    let card = time(|| {
        let _ = gisclaw::card::card_for_dir(&data, "data/", gisclaw::card::CARD_TOKEN_BUDGET);
    });
    let card_request = Request::CardText {
        shown_as: "data/".into(),
        budget: gisclaw::card::CARD_TOKEN_BUDGET,
    };
    let card_here = time(|| {
        let _ = answer_here(&data, &card_request);
    });
    let reference = time(|| {
        let _ = gisclaw::outputs::sanity::Reference::from_inputs(Some(&data), &task_text);
    });
    let reference_here = time(|| {
        let _ = answer_here(
            &data,
            &Request::Reference {
                task_text: task_text.clone(),
            },
        );
    });

    let zygote = Zygote::start(gisclaw::sandbox::SandboxConfig::default()).expect("zygote");
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("data")).unwrap();
    for name in ["stations.csv", "city_boundary.geojson"] {
        std::fs::copy(data.join(name), work.path().join("data").join(name)).unwrap();
    }
    let mut session = Session::open(&zygote, work.path()).expect("session");
    let pred = work.path().join("pred_results");
    let mut cell_times = Vec::new();
    for cell in CELLS {
        let t = Instant::now();
        let out = session.execute(cell).expect("cell runs");
        assert_eq!(out.status, CellStatus::Ok, "{:?}", out.result.error);
        cell_times.push(t.elapsed());
    }
    let written = vec![
        "temperature.tif".to_string(),
        "temperature_map.png".to_string(),
    ];
    let checks = OutputChecks::new(Some(&data), &task_text);
    // Cold: a new reader started for the check itself.
    let cold = time(|| {
        // Fresh checks each time: no cache, no reader started ahead.
        let mut fresh = OutputChecks::with_reference(checks.reference.clone());
        let _ = fresh.after_cell(&pred, &written, &[]);
    });
    // As in a run: the reader the previous check started has had the next
    // cell's time (here the map cell's) to confine itself.
    let mut run_checks = checks.clone();
    let _ = run_checks.after_cell(&pred, &written, &[]);
    let confined = median(
        (0..RUNS)
            .map(|_| {
                std::thread::sleep(cell_times[2]);
                rewritten(&pred, &written);
                let t = Instant::now();
                let _ = run_checks.after_cell(&pred, &written, &[]);
                t.elapsed()
            })
            .collect(),
    );
    let warnings = Request::Warnings {
        files: written.clone(),
        reference: serde_json::to_value(&checks.reference).unwrap(),
    };
    let here = time(|| {
        let _ = answer_here(&pred, &warnings);
    });
    let one = Request::Warnings {
        files: vec!["temperature.tif".into()],
        reference: serde_json::to_value(&checks.reference).unwrap(),
    };
    let one_confined = median(
        (0..RUNS)
            .map(|_| {
                std::thread::sleep(cell_times[1]);
                rewritten(&pred, &written[..1]);
                let t = Instant::now();
                let _ = run_checks.after_cell(&pred, &written[..1], &[]);
                t.elapsed()
            })
            .collect(),
    );
    let one_here = time(|| {
        let _ = answer_here(&pred, &one);
    });
    session.end();

    println!("confined_reader: median of {RUNS}, confined (`gisclaw __read`, one per request) against the same answer made in this process");
    println!(
        "{:<44} {:>11} {:>13} {:>9}",
        "", "confined ms", "in-process ms", "ratio"
    );
    for (what, c, h) in [
        ("the example's data card", card, card_here),
        (
            "the output checks' reference (inputs' CRS)",
            reference,
            reference_here,
        ),
        ("output checks of both, a reader started cold", cold, here),
        (
            "output checks of temperature.tif, as in a run",
            one_confined,
            one_here,
        ),
        ("output checks of both outputs, as in a run", confined, here),
    ] {
        println!(
            "{what:<44} {:>11.1} {:>13.1} {:>8.2}×",
            ms(c),
            ms(h),
            c.as_secs_f64() / h.as_secs_f64()
        );
    }
    let writing = cell_times[1] + cell_times[2];
    let before = writing + here;
    let after = writing + confined;
    println!(
        "an agent round writing both outputs (its cells {:.0} ms in the sandbox + checks): {:.0} ms confined vs {:.0} ms in-process: {:+.1} % (goal ≤ +10 %)",
        ms(writing),
        ms(after),
        ms(before),
        (after.as_secs_f64() / before.as_secs_f64() - 1.0) * 100.0
    );
}
