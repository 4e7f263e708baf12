//! Distributed builds, coordinator side (RFC E5): commit segments that
//! workers built as one logical index, in one new dataset version.

use std::ffi::c_char;

use lance::index::DatasetIndexExt;

use crate::convert::{required_nonempty_str, slice_arg};
use crate::dataset::{dataset_ref, LanceDataset};
use crate::error::{invalid, status, CError, Code, Context};
use crate::index::{require_column, user_segments};
use crate::metadata::decode_metadata;
use crate::runtime::block_on;

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_commit_index_segments(
    dataset: *mut LanceDataset,
    index_name: *const c_char,
    column: *const c_char,
    segment_metadata_bytes: *const *const u8,
    segment_metadata_lens: *const usize,
    segment_count: usize,
    replace: bool,
) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let name = required_nonempty_str(index_name, "index_name")?;
        let column = required_nonempty_str(column, "column")?;
        if segment_count == 0 {
            return Err(invalid("segment_count is 0: a commit needs at least one segment"));
        }
        let pointers = slice_arg(segment_metadata_bytes, segment_count, "segment_metadata_bytes")?;
        let lens = slice_arg(segment_metadata_lens, segment_count, "segment_metadata_lens")?;
        let mut segments = Vec::with_capacity(segment_count);
        for (i, (&ptr, &len)) in pointers.iter().zip(lens).enumerate() {
            let what = format!("segment_metadata_bytes[{i}]");
            let bytes = slice_arg(ptr, len, &what)?;
            segments.push(decode_metadata(bytes, &what)?);
        }
        handle.mutate(|ds| {
            require_column(ds, column)?;
            let existing = user_segments(ds)?.into_iter().filter(|s| s.name == name).count();
            if existing > 0 && !replace {
                return Err(CError::new(
                    Code::Index,
                    format!("index '{name}' already exists; pass replace = true to replace it"),
                ));
            }
            block_on(ds.commit_existing_index_segments(name, column, segments))?
                .context(format!("committing {segment_count} segments as index '{name}'"))
        })
    })
}
