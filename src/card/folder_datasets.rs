//! Folders that GDAL opens as one dataset: a File Geodatabase (`x.gdb/`,
//! Esri's most common exchange format). The card and `list_files` show it
//! as one entry under the folder's name — the name `gpd.read_file` takes,
//! with `layer=` — instead of its internal files (`a00000009.gdbtable`,
//! `a00000009.gdbtablx`…), which nothing reads one by one. (A Zarr store
//! is left as files: the sandbox has no `zarr` package to open it.)

/// Whether a folder name marks a dataset.
fn is_dataset_name(component: &str) -> bool {
    component.to_ascii_lowercase().ends_with(".gdb")
}

/// The dataset folder `rel` (a relative file path) lies in, if any: the
/// outermost folder named `*.gdb`.
fn dataset_of(rel: &str) -> Option<&str> {
    let mut end = 0;
    for component in rel.split('/') {
        let next = end + component.len();
        if next < rel.len() && is_dataset_name(component) {
            return Some(&rel[..next]);
        }
        end = next + 1;
    }
    None
}

/// `files` (relative paths, sorted, with sizes) with the files of each
/// dataset folder replaced by one entry: the folder, with their total size.
pub(super) fn collapsed(files: Vec<(String, u64)>) -> Vec<(String, u64)> {
    if !files.iter().any(|(rel, _)| dataset_of(rel).is_some()) {
        return files;
    }
    let mut folders: Vec<(String, u64)> = Vec::new();
    let mut rest = Vec::new();
    for (rel, size) in files {
        match dataset_of(&rel) {
            Some(folder) => match folders.iter_mut().find(|f| f.0 == folder) {
                Some(f) => f.1 += size,
                None => folders.push((folder.to_string(), size)),
            },
            None => rest.push((rel, size)),
        }
    }
    rest.extend(folders);
    rest.sort_by(|a, b| a.0.cmp(&b.0));
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_geodatabase_is_one_entry_under_its_folder_name() {
        let mut files: Vec<(String, u64)> = [
            ("city.gdb/a00000001.gdbtable", 10),
            ("city.gdb/a0000000a.gdbtablx", 5),
            ("city.gdb/gdb", 1),
            ("in/Parcels.GDB/a00000004.gdbtable", 7),
            ("roads.shp", 3),
            ("notes.gdb", 4),
        ]
        .iter()
        .map(|(r, s)| (r.to_string(), *s))
        .collect();
        files.sort();
        let expected: Vec<(String, u64)> = [
            ("city.gdb", 16),
            ("in/Parcels.GDB", 7),
            ("notes.gdb", 4),
            ("roads.shp", 3),
        ]
        .iter()
        .map(|(r, s)| (r.to_string(), *s))
        .collect();
        assert_eq!(collapsed(files), expected);
    }
}
