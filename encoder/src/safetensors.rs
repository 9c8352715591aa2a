//! Reads a `.safetensors` file by its documented layout: an 8-byte
//! little-endian header length, a JSON header mapping each tensor's name to
//! `{dtype, shape, data_offsets}`, then the raw little-endian data. Only
//! what the encoder needs: `F32` tensors, copied out by name.

use std::collections::HashMap;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// The tensors of one file, by name (a leading `bert.` dropped).
#[derive(Debug)]
pub struct Tensors<'a> {
    entries: HashMap<String, Entry>,
    data: &'a [u8],
}

impl<'a> Tensors<'a> {
    /// Parses the header of `bytes`; the data is read on demand.
    pub fn parse(bytes: &'a [u8]) -> Result<Tensors<'a>, String> {
        let len_bytes: [u8; 8] = bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or("shorter than the 8-byte header length")?;
        let header_len = usize::try_from(u64::from_le_bytes(len_bytes))
            .map_err(|_| "header length does not fit in memory")?;
        let header = bytes
            .get(8..8usize.saturating_add(header_len))
            .ok_or_else(|| format!("header of {header_len} bytes runs past the end of the file"))?;
        let raw: HashMap<String, serde_json::Value> = serde_json::from_slice(header)
            .map_err(|e| format!("header: column {}: {e}", e.column()))?;
        let mut entries = HashMap::new();
        for (name, value) in raw {
            if name == "__metadata__" {
                continue;
            }
            let entry: Entry = serde_json::from_value(value)
                .map_err(|e| format!("header: tensor `{name}`: {e}"))?;
            let name = name
                .strip_prefix("bert.")
                .map(str::to_string)
                .unwrap_or(name);
            entries.insert(name, entry);
        }
        Ok(Tensors {
            entries,
            data: &bytes[8 + header_len..],
        })
    }

    /// The shape of tensor `name`.
    pub fn shape(&self, name: &str) -> Result<&[usize], String> {
        self.entries
            .get(name)
            .map(|e| e.shape.as_slice())
            .ok_or_else(|| format!("no tensor `{name}`"))
    }

    /// Tensor `name` as `f32`s, checked to be `F32` of shape `shape`.
    pub fn f32(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let e = self
            .entries
            .get(name)
            .ok_or_else(|| format!("no tensor `{name}`"))?;
        if e.dtype != "F32" {
            return Err(format!("tensor `{name}`: dtype {}, expected F32", e.dtype));
        }
        if e.shape != shape {
            return Err(format!(
                "tensor `{name}`: shape {:?}, expected {shape:?}",
                e.shape
            ));
        }
        let [start, end] = e.data_offsets;
        let count: usize = shape.iter().product();
        let bytes = self
            .data
            .get(start..end)
            .filter(|b| b.len() == count * 4)
            .ok_or_else(|| {
                format!("tensor `{name}`: data offsets {start}..{end} do not hold {count} f32s")
            })?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_a_tensor_by_name_without_its_prefix() {
        let data: Vec<u8> = [1.0f32, -2.5]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let bytes = file(
            r#"{"__metadata__":{"format":"pt"},"bert.a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
            &data,
        );
        let t = Tensors::parse(&bytes).unwrap();
        assert_eq!(t.shape("a").unwrap(), &[2]);
        assert_eq!(t.f32("a", &[2]).unwrap(), vec![1.0, -2.5]);
    }

    #[test]
    fn wrong_shapes_types_and_offsets_are_named() {
        let bytes = file(
            r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"c":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
            &[0; 8],
        );
        let t = Tensors::parse(&bytes).unwrap();
        assert!(t
            .f32("a", &[3])
            .unwrap_err()
            .contains("shape [2], expected [3]"));
        assert!(t.f32("b", &[1]).unwrap_err().contains("dtype I64"));
        assert!(t.f32("c", &[4]).unwrap_err().contains("data offsets 0..16"));
        assert!(t.f32("d", &[1]).unwrap_err().contains("no tensor `d`"));
    }

    #[test]
    fn a_truncated_file_is_an_error_not_a_panic() {
        assert!(Tensors::parse(&[1, 2]).is_err());
        assert!(Tensors::parse(&file("{", &[]))
            .unwrap_err()
            .contains("header"));
        let mut short = 1000u64.to_le_bytes().to_vec();
        short.extend_from_slice(b"{}");
        assert!(Tensors::parse(&short)
            .unwrap_err()
            .contains("runs past the end"));
    }
}
