//! `solution.py`: the successful cells of a run, consolidated into one
//! script that runs on its own with the venv's python, from the work dir.

/// The helper module the sandbox pre-loads; inlined when the cells use it.
const TOOLS_SRC: &str = include_str!("../../tools/gisclaw_tools.py");

/// Helper names whose use pulls the helper module into the script.
const HELPERS: &[&str] = &["load_raster", "save_raster", "list_files", "to_numeric_columns", "gisclaw_tools"];

/// Builds the script from the cells, in order.
pub fn consolidate<'a>(task_id: &str, cells: impl IntoIterator<Item = &'a str>) -> String {
    let cells: Vec<&str> = cells.into_iter().collect();
    let mut script = format!(
        "#!/usr/bin/env python3\n\"\"\"gisclaw solution for task {task_id}: the successful cells of the run, in order.\n\nRun it from its folder with the sandbox's python.\n\"\"\"\n\
import os\nimport json\nimport math\n\nos.chdir(os.path.dirname(os.path.abspath(__file__)))\n\n\
import matplotlib\nmatplotlib.use(\"Agg\")\nimport matplotlib.pyplot as plt\nimport numpy as np\nimport pandas as pd\n\
import geopandas as gpd\nimport rasterio\nimport shapely\nimport xarray as xr\nimport networkx as nx\nimport scipy\nimport sklearn\nimport seaborn as sns\n"
    );
    if cells.iter().any(|c| HELPERS.iter().any(|h| c.contains(h))) {
        script.push_str("\n# --- gisclaw helpers (tools/gisclaw_tools.py) ---\n");
        script.push_str(TOOLS_SRC);
        script.push_str("# --- end of helpers ---\n");
    }
    for (i, cell) in cells.iter().enumerate() {
        script.push_str(&format!("\n# %% cell {}\n", i + 1));
        script.push_str(cell.trim_end());
        script.push('\n');
    }
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_kept_in_order_and_helpers_inlined_only_when_used() {
        let plain = consolidate("T1", ["a = 1", "print(a)"]);
        assert!(plain.find("a = 1").unwrap() < plain.find("print(a)").unwrap());
        assert!(!plain.contains("def load_raster"));
        let with = consolidate("T1", ["d, m = load_raster('x.tif')"]);
        assert!(with.contains("def load_raster"));
    }
}
