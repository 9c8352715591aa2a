//! The Python that a session's cells need to run outside the sandbox
//! (`solution.py`, `solution.ipynb`): the imports and aliases every session
//! starts with, and gisclaw's helper module when a cell uses it.

use super::TOOLS_SRC;

/// Helper names whose use pulls the helper module into the script.
pub const HELPERS: &[&str] = &[
    "load_raster",
    "save_raster",
    "list_files",
    "to_numeric_columns",
    "grid_template",
    "auto_numeric",
    "gisclaw_tools",
];

/// The imports and aliases every sandbox session starts with (`np`, `gpd`,
/// `plt`, …), so that the cells run outside the sandbox as they ran in it.
pub const SESSION_IMPORTS: &str = "import os\nimport json\nimport math\n\n\
import matplotlib.pyplot as plt\nimport numpy as np\nimport pandas as pd\n\
import geopandas as gpd\nimport rasterio\nimport shapely\nimport xarray as xr\nimport networkx as nx\nimport scipy\nimport sklearn\nimport seaborn as sns\n";

/// Whether a cell uses gisclaw's helper module (`load_raster`, …).
pub fn uses_helpers(cells: &[&str]) -> bool {
    cells.iter().any(|c| HELPERS.iter().any(|h| c.contains(h)))
}

/// The import of gisclaw's helper module when a cell uses it, else
/// nothing: for notebooks, whose `gisclaw` kernel (the sandbox venv) has
/// the module installed by `make setup`.
pub fn helpers_import_for(cells: &[&str]) -> String {
    if uses_helpers(cells) {
        "\n# gisclaw's helpers (tools/gisclaw_tools.py: load_raster, save_raster,\n# list_files, to_numeric_columns, grid_template, auto_numeric), installed in the `gisclaw` kernel by\n# `make setup`; another kernel: put tools/gisclaw_tools.py beside the notebook.\nfrom gisclaw_tools import *\n".to_string()
    } else {
        String::new()
    }
}

/// gisclaw's helper module (`load_raster`, …) inlined when a cell uses it,
/// else nothing: for `solution.py`, which runs on its own anywhere.
pub fn helpers_for(cells: &[&str]) -> String {
    if uses_helpers(cells) {
        format!("\n# --- gisclaw helpers (tools/gisclaw_tools.py) ---\n{TOOLS_SRC}# --- end of helpers ---\n")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exported_helper_pulls_the_module_into_a_script() {
        // `__all__` of tools/gisclaw_tools.py, as the session exports it.
        let start = TOOLS_SRC
            .find("__all__ = [")
            .expect("the module has __all__");
        let end = start + TOOLS_SRC[start..].find(']').expect("__all__ ends");
        let exported: Vec<&str> = TOOLS_SRC[start..end]
            .split('"')
            .skip(1)
            .step_by(2)
            .collect();
        assert!(exported.len() >= 6, "{exported:?}");
        for name in exported {
            assert!(HELPERS.contains(&name), "{name} is missing from HELPERS");
        }
    }
}
