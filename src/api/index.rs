//! lance.h section "Indices": one-shot creation (built and committed in one
//! call, with or without progress and cancellation), dropping, and listing
//! indices and their segments.

use std::ffi::c_char;
use std::sync::Arc;

use lance::index::vector::utils::get_vector_dim;
use lance::index::DatasetIndexExt;
use serde_json::json;

use crate::boundary::error::{guard, invalid, not_found, status, CResult, Context};
use crate::boundary::ffi::{handle_ref, into_c_string, optional_str, require_out, required_nonempty_str, write_out};
use crate::boundary::params::{CoreParams, LanceVectorIndexParams};
use crate::boundary::training_options::{LanceVectorTrainingOptions, TrainingOptions};
use crate::index::build::create_one_shot;
use crate::index::build_params::{scalar_kind, scalar_params, vector_params};
use crate::index::catalog::{
    check_partitions, check_vector_column, column_names, live_rows, named_segments, optional_index_name, user_segments,
};
use crate::index::codec::segment_type_name;
use crate::index::injection::{vector_core_params, Injected};
use crate::index::progress::{BuildControl, LanceIndexBuildControl};
use crate::index::training::{train_alone, Plan};
use crate::process::runtime::block_on;
use crate::store::handle::{dataset_ref, fragment_list, LanceDataset};

/// The dataset, column and index name every one-shot creation takes.
unsafe fn target<'a>(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
) -> CResult<(&'a LanceDataset, &'a str, Option<String>)> {
    Ok((dataset_ref(dataset)?, required_nonempty_str(column, "column")?, optional_index_name(index_name)?))
}

/// Mirrors `LanceIndexCreateOptions` in lance.h.
#[repr(C)]
pub struct LanceIndexCreateOptions {
    pub control: *const LanceIndexBuildControl,
    pub training: *const LanceVectorTrainingOptions,
}
crate::c_layout!(LanceIndexCreateOptions, 16; control @ 0, training @ 8);

/// The control and training options of an optional `LanceIndexCreateOptions`.
unsafe fn create_options(
    options: *const LanceIndexCreateOptions,
) -> (*const LanceIndexBuildControl, *const LanceVectorTrainingOptions) {
    options.as_ref().map_or((std::ptr::null(), std::ptr::null()), |o| (o.control, o.training))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_vector_index(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    replace: bool,
) -> i32 {
    status(|| create_vector(dataset, column, index_name, params, std::ptr::null(), replace, std::ptr::null()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_scalar_index(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    replace: bool,
) -> i32 {
    status(|| create_scalar(dataset, column, index_name, index_type, params_json, replace, std::ptr::null()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_vector_index_v2(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    replace: bool,
    options: *const LanceIndexCreateOptions,
) -> i32 {
    let (control, training) = create_options(options);
    status(|| create_vector(dataset, column, index_name, params, training, replace, control))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_scalar_index_v2(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    replace: bool,
    options: *const LanceIndexCreateOptions,
) -> i32 {
    let (control, training) = create_options(options);
    status(|| {
        if !training.is_null() {
            return Err(invalid(
                "options->training is set for a scalar index: training options apply to vector indices only",
            ));
        }
        create_scalar(dataset, column, index_name, index_type, params_json, replace, control)
    })
}

/// Deprecated in lance.h: lance_dataset_create_vector_index_v2() with a control.
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_vector_index_with_control(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| create_vector(dataset, column, index_name, params, std::ptr::null(), replace, control))
}

/// Deprecated in lance.h: lance_dataset_create_vector_index_v2() with a
/// control and training options.
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_vector_index_with_options(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceVectorTrainingOptions,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| create_vector(dataset, column, index_name, params, options, replace, control))
}

/// Every form of the one-shot vector creation.
unsafe fn create_vector(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceVectorTrainingOptions,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> CResult<()> {
    let (handle, column, name) = target(dataset, column, index_name)?;
    let p = *handle_ref(params, "params")?;
    let (index_type, mut core_params) = vector_params(&p)?;
    let options = TrainingOptions::from_c(options.as_ref())?;
    let control = BuildControl::from_c(control);
    create_one_shot(handle, column, name, replace, &control, |ds, column| {
        check_vector_column(ds, column, p.metric)?;
        check_partitions(ds, p.num_partitions, None)?;
        if let Some(seed) = options.seed {
            // Trained first with the seeded rounds over every fragment,
            // then built with that model.
            let mut p = p;
            if p.num_partitions == 0 {
                p.num_partitions = options.num_partitions(p.index_type, live_rows(ds, None)?)?;
            }
            let plan = Plan::from_params(column, &p, seed)?;
            let model = train_alone(Arc::new(ds.clone()), None, plan, &mut control.steps("the seeded training"))?;
            let dim = get_vector_dim(ds.schema(), column)?;
            let (_, with_model) = vector_core_params(&p, column, dim, Some(Injected::from_model(&model, &p)?))?;
            core_params = with_model;
        }
        let rows = if options.streams() { live_rows(ds, None)? } else { 0 };
        options.apply(&mut core_params, p.index_type, rows)?;
        Ok((index_type, CoreParams::Vector(core_params)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_recommended_num_partitions(
    dataset: *const LanceDataset,
    index_type: i32,
    target_partition_size: u32,
    fragment_ids: *const u32,
    fragment_count: usize,
    out_num_partitions: *mut u32,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        require_out(out_num_partitions, "out_num_partitions")?;
        let fragments = fragment_list(&ds, fragment_ids, fragment_count, "fragment_ids")?;
        let options = TrainingOptions {
            target_partition_size: (target_partition_size != 0).then_some(target_partition_size as usize),
            ..TrainingOptions::default()
        };
        let count = options.num_partitions(index_type, live_rows(&ds, fragments.as_deref())?)?;
        write_out(out_num_partitions, count);
        Ok(())
    })
}

/// Deprecated in lance.h: lance_dataset_create_scalar_index_v2() with a control.
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_create_scalar_index_with_control(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> i32 {
    status(|| create_scalar(dataset, column, index_name, index_type, params_json, replace, control))
}

/// Every form of the one-shot scalar creation.
unsafe fn create_scalar(
    dataset: *mut LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    replace: bool,
    control: *const LanceIndexBuildControl,
) -> CResult<()> {
    let (handle, column, name) = target(dataset, column, index_name)?;
    let (index_type, kind) = scalar_kind(index_type)?;
    let params = scalar_params(kind, optional_str(params_json, "params_json")?)?;
    let control = BuildControl::from_c(control);
    create_one_shot(handle, column, name, replace, &control, |_, _| Ok((index_type, CoreParams::Scalar(params))))
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_drop_index(dataset: *mut LanceDataset, name: *const c_char) -> i32 {
    status(|| {
        let handle = dataset_ref(dataset)?;
        let name = required_nonempty_str(name, "name")?;
        handle.mutate(|ds| {
            if user_segments(ds)?.iter().all(|idx| idx.name != name) {
                return Err(not_found(format!("index '{name}' does not exist")));
            }
            block_on(ds.drop_index(name))?.context(format!("dropping index '{name}'"))
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_prewarm_index(dataset: *const LanceDataset, index_name: *const c_char) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        if user_segments(&ds)?.iter().all(|idx| idx.name != name) {
            return Err(not_found(format!(
                "index_name = '{name}' is not an index of dataset version {}",
                ds.version().version
            )));
        }
        block_on(ds.prewarm_index(name))?.context(format!("prewarming index '{name}'"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_count(dataset: *const LanceDataset) -> u64 {
    guard(0, || {
        let segments = user_segments(&dataset_ref(dataset)?.snapshot())?;
        let mut names: Vec<&str> = segments.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        Ok(names.len() as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_list_json(dataset: *const LanceDataset) -> *const c_char {
    guard(std::ptr::null(), || {
        let ds = dataset_ref(dataset)?.snapshot();
        let segments = user_segments(&ds)?;
        let entries: Vec<serde_json::Value> = segments
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "uuid": s.uuid.to_string(),
                    "columns": column_names(&ds, &s.fields),
                    "type": segment_type_name(s),
                    "dataset_version": s.dataset_version,
                })
            })
            .collect();
        Ok(into_c_string(serde_json::Value::Array(entries).to_string()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_segment_count(
    dataset: *const LanceDataset,
    index_name: *const c_char,
) -> u64 {
    guard(0, || {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        Ok(named_segments(&ds, name)?.len() as u64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_index_segments(
    dataset: *const LanceDataset,
    index_name: *const c_char,
    out_uuids: *mut u8,
    capacity: usize,
    out_count: *mut u64,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let name = required_nonempty_str(index_name, "index_name")?;
        let segments = named_segments(&ds, name)?;
        if capacity < segments.len() {
            return Err(invalid(format!(
                "capacity = {capacity} is less than the {} segments of index '{name}'",
                segments.len()
            )));
        }
        require_out(out_uuids, "out_uuids")?;
        for (i, s) in segments.iter().enumerate() {
            std::ptr::copy_nonoverlapping(s.uuid.as_bytes().as_ptr(), out_uuids.add(i * 16), 16);
        }
        if !out_count.is_null() {
            write_out(out_count, segments.len() as u64);
        }
        Ok(())
    })
}
