//! lance.h section "Distributed index builds: shared models" (RFC E1):
//! the trainers' arguments checked and handed to index/trainers.rs, and the
//! C surface of a model (index/vector_model.rs) as Arrow arrays and as bytes.

use std::ffi::c_char;
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use lance::Dataset;
use lance_linalg::distance::DistanceType;

use crate::boundary::arrow::{export_array, read_f32_list};
use crate::boundary::error::{guard, invalid, status, CResult};
use crate::boundary::ffi::{
    free_handle, handle_ref, into_c_string, into_handle, require_out, required_nonempty_str, slice_arg,
    write_bytes_out, write_out,
};
use crate::boundary::params::{metric_from_c, LanceVectorIndexParams};
use crate::boundary::training_options::{LanceVectorTrainingOptions, TrainingOptions};
use crate::index::build_params::{pq_params, vector_params};
use crate::index::catalog::{check_partitions, check_vector_column, live_rows};
use crate::index::committed_model::read_committed_model;
use crate::index::kinds::{has_rotation, IVF_FLAT, IVF_PQ};
use crate::index::progress::{BuildControl, LanceIndexBuildControl};
use crate::index::trainers::{check_sub_vectors, column_dim, train_ivf, train_model, train_pq};
use crate::index::vector_model::{fsl, narrow, rq_num_bits, LanceVectorModel, PqModel};
use crate::store::handle::{dataset_ref, fragment_list, LanceDataset};

/// The arguments every trainer starts with: the snapshot, a vector column
/// and a metric that fits it.
unsafe fn trainer_args<'a>(
    dataset: *const LanceDataset,
    column: *const c_char,
    metric: i32,
) -> CResult<(Arc<Dataset>, &'a str, DistanceType)> {
    let ds = dataset_ref(dataset)?.snapshot();
    let column = required_nonempty_str(column, "column")?;
    let distance = metric_from_c(metric, "metric")?;
    check_vector_column(&ds, column, metric)?;
    Ok((ds, column, distance))
}

/// The fragments to sample; `name` is the caller's parameter, for messages.
unsafe fn sample_fragments(ds: &Dataset, ids: *const u32, count: usize, name: &str) -> CResult<Option<Vec<u32>>> {
    fragment_list(ds, ids, count, name)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_train_ivf_centroids(
    dataset: *const LanceDataset,
    column: *const c_char,
    num_partitions: u32,
    metric: i32,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    out_centroids: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    let fragments = (sample_fragment_ids, sample_fragment_count, "sample_fragment_ids");
    status(|| train_ivf_centroids(dataset, column, num_partitions, metric, fragments, out_centroids, out_schema))
}

/// Both IVF trainers: `fragments` is (ids, count, the caller's name for them).
unsafe fn train_ivf_centroids(
    dataset: *const LanceDataset,
    column: *const c_char,
    num_partitions: u32,
    metric: i32,
    (sample_fragment_ids, sample_fragment_count, fragments_name): (*const u32, usize, &str),
    out_centroids: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> CResult<()> {
    let (ds, column, metric) = trainer_args(dataset, column, metric)?;
    if num_partitions == 0 {
        return Err(invalid("num_partitions must be at least 1"));
    }
    require_out(out_centroids, "out_centroids")?;
    require_out(out_schema, "out_schema")?;
    let fragments = sample_fragments(&ds, sample_fragment_ids, sample_fragment_count, fragments_name)?;
    check_partitions(&ds, num_partitions, fragments.as_deref())?;
    let centroids = train_ivf(
        &ds,
        column,
        num_partitions as usize,
        metric,
        &LanceVectorIndexParams::defaults(IVF_FLAT),
        &TrainingOptions::default(),
        fragments.as_deref(),
        &BuildControl::default(),
    )?;
    export_array(&centroids, out_centroids, out_schema)
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_train_pq_codebook(
    dataset: *const LanceDataset,
    column: *const c_char,
    num_sub_vectors: u32,
    num_bits: u32,
    metric: i32,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    out_codebook: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    status(|| {
        let (ds, column, metric) = trainer_args(dataset, column, metric)?;
        require_out(out_codebook, "out_codebook")?;
        require_out(out_schema, "out_schema")?;
        let (values, dim) = read_f32_list(ivf_centroids, ivf_centroids_schema, "ivf_centroids")?;
        let centroids = fsl(values, dim)?;
        let fragments = sample_fragments(&ds, sample_fragment_ids, sample_fragment_count, "sample_fragment_ids")?;
        let p = LanceVectorIndexParams { num_sub_vectors, num_bits, ..LanceVectorIndexParams::defaults(IVF_PQ) };
        let params = pq_params(&p);
        let col_dim = column_dim(&ds, column)?;
        check_sub_vectors(params.num_sub_vectors, col_dim, column, "num_sub_vectors")?;
        let codebook =
            train_pq(&ds, column, metric, &params, centroids, fragments.as_deref(), &BuildControl::default())?;
        export_array(&fsl(codebook, col_dim)?, out_codebook, out_schema)
    })
}

/// Upstream's outputs are zeroed before anything can fail.
unsafe fn zero_outputs(out_array: *mut FFI_ArrowArray, out_schema: *mut FFI_ArrowSchema) -> CResult<()> {
    require_out(out_array, "out_array")?;
    require_out(out_schema, "out_schema")?;
    std::ptr::write(out_array, FFI_ArrowArray::empty());
    std::ptr::write(out_schema, FFI_ArrowSchema::empty());
    Ok(())
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn lance_index_train_ivf_model(
    dataset: *const LanceDataset,
    column: *const c_char,
    num_partitions: u32,
    metric: i32,
    fragment_ids: *const u32,
    fragment_count: usize,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    status(|| {
        zero_outputs(out_array, out_schema)?;
        train_ivf_centroids(
            dataset,
            column,
            num_partitions,
            metric,
            (fragment_ids, fragment_count, "fragment_ids"),
            out_array,
            out_schema,
        )
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub unsafe extern "C" fn lance_index_train_pq_model(
    dataset: *const LanceDataset,
    column: *const c_char,
    num_sub_vectors: u32,
    num_bits: u32,
    metric: i32,
    fragment_ids: *const u32,
    fragment_count: usize,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    status(|| {
        zero_outputs(out_array, out_schema)?;
        let (ds, column, metric) = trainer_args(dataset, column, metric)?;
        if num_sub_vectors == 0 {
            return Err(invalid("num_sub_vectors must be at least 1"));
        }
        if num_bits != 0 && num_bits != 4 && num_bits != 8 {
            return Err(invalid(format!("num_bits = {num_bits}: PQ codes have 4 or 8 bits (0 = 8)")));
        }
        let (values, dim) = read_f32_list(ivf_centroids, ivf_centroids_schema, "ivf_centroids")?;
        let centroids = fsl(values, dim)?;
        let fragments = sample_fragments(&ds, fragment_ids, fragment_count, "fragment_ids")?;
        let p = LanceVectorIndexParams { num_sub_vectors, num_bits, ..LanceVectorIndexParams::defaults(IVF_PQ) };
        let params = pq_params(&p);
        let col_dim = column_dim(&ds, column)?;
        check_sub_vectors(params.num_sub_vectors, col_dim, column, "num_sub_vectors")?;
        let codebook =
            train_pq(&ds, column, metric, &params, centroids, fragments.as_deref(), &BuildControl::default())?;
        // The same values as lance_dataset_train_pq_codebook's, in rows of one sub-vector.
        export_array(&fsl(codebook, col_dim / params.num_sub_vectors)?, out_array, out_schema)
    })
}

/// Every trainer of a whole model; `fragments` is (ids, count) of the
/// sample, `options` None for the forms that refuse num_partitions 0.
unsafe fn train_vector_model(
    dataset: *const LanceDataset,
    column: *const c_char,
    params: *const LanceVectorIndexParams,
    (sample_fragment_ids, sample_fragment_count): (*const u32, usize),
    options: Option<TrainingOptions>,
    control: &BuildControl,
    out_model: *mut *mut LanceVectorModel,
) -> CResult<()> {
    let ds = dataset_ref(dataset)?.snapshot();
    let column = required_nonempty_str(column, "column")?;
    if params.is_null() {
        return Err(invalid("params must not be NULL"));
    }
    let mut p = *params;
    require_out(out_model, "out_model")?;
    // Validates the index type and metric the same way a build does.
    vector_params(&p)?;
    let metric = metric_from_c(p.metric, "params->metric")?;
    if p.num_partitions == 0 && options.is_none() {
        return Err(invalid(
            "params->num_partitions must be set to train a shared model (every segment must agree on it)",
        ));
    }
    let rq_bits = has_rotation(p.index_type).then(|| rq_num_bits(p.num_bits, "params->num_bits")).transpose()?;
    let fragments = sample_fragments(&ds, sample_fragment_ids, sample_fragment_count, "sample_fragment_ids")?;
    check_vector_column(&ds, column, p.metric)?;
    let options = options.unwrap_or_default();
    if p.num_partitions == 0 {
        // The count a build would use over the rows sampled.
        p.num_partitions = options.num_partitions(p.index_type, live_rows(&ds, fragments.as_deref())?)?;
    }
    let model = train_model(ds, column, &p, metric, rq_bits, fragments, &options, control)?;
    write_out(out_model, into_handle(model));
    Ok(())
}

/// Mirrors `LanceVectorModelTrainOptions` in lance.h.
#[repr(C)]
pub struct LanceVectorModelTrainOptions {
    pub control: *const LanceIndexBuildControl,
    pub training: *const LanceVectorTrainingOptions,
}
crate::c_layout!(LanceVectorModelTrainOptions, 16; control @ 0, training @ 8);

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_train(
    dataset: *const LanceDataset,
    column: *const c_char,
    params: *const LanceVectorIndexParams,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    options: *const LanceVectorModelTrainOptions,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        let (control, training) =
            options.as_ref().map_or((std::ptr::null(), std::ptr::null()), |o| (o.control, o.training));
        let options = TrainingOptions::from_c(training.as_ref())?;
        let fragments = (sample_fragment_ids, sample_fragment_count);
        train_vector_model(dataset, column, params, fragments, Some(options), &BuildControl::from_c(control), out_model)
    })
}

/// Deprecated in lance.h: lance_vector_model_train() without options, and
/// num_partitions 0 refused.
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_train_vector_model(
    dataset: *const LanceDataset,
    column: *const c_char,
    params: *const LanceVectorIndexParams,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    let fragments = (sample_fragment_ids, sample_fragment_count);
    status(|| train_vector_model(dataset, column, params, fragments, None, &BuildControl::default(), out_model))
}

/// Deprecated in lance.h: lance_vector_model_train() with a control, and
/// num_partitions 0 refused.
#[no_mangle]
pub unsafe extern "C" fn lance_dataset_train_vector_model_with_control(
    dataset: *const LanceDataset,
    column: *const c_char,
    params: *const LanceVectorIndexParams,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    control: *const LanceIndexBuildControl,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    let fragments = (sample_fragment_ids, sample_fragment_count);
    status(|| train_vector_model(dataset, column, params, fragments, None, &BuildControl::from_c(control), out_model))
}

/// Deprecated in lance.h: lance_vector_model_train() with a control and
/// training options; the same code path.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lance_dataset_train_vector_model_with_options(
    dataset: *const LanceDataset,
    column: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceVectorTrainingOptions,
    sample_fragment_ids: *const u32,
    sample_fragment_count: usize,
    control: *const LanceIndexBuildControl,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        let options = TrainingOptions::from_c(options.as_ref())?;
        let fragments = (sample_fragment_ids, sample_fragment_count);
        train_vector_model(dataset, column, params, fragments, Some(options), &BuildControl::from_c(control), out_model)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_from_arrow(
    metric: i32,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    num_sub_vectors: u32,
    num_bits: u32,
    pq_codebook: *const FFI_ArrowArray,
    pq_codebook_schema: *const FFI_ArrowSchema,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        metric_from_c(metric, "metric")?;
        require_out(out_model, "out_model")?;
        let (centroids, dim) = read_f32_list(ivf_centroids, ivf_centroids_schema, "ivf_centroids")?;
        let pq = if pq_codebook.is_null() {
            None
        } else {
            let (codebook, _) = read_f32_list(pq_codebook, pq_codebook_schema, "pq_codebook")?;
            Some(PqModel { num_sub_vectors: num_sub_vectors as usize, num_bits: num_bits as usize, codebook })
        };
        let model = LanceVectorModel::new(metric, dim, centroids, pq)?;
        write_out(out_model, into_handle(model));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_dataset_read_vector_model(
    dataset: *const LanceDataset,
    index_name: *const c_char,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        let ds = dataset_ref(dataset)?.snapshot();
        let index_name = required_nonempty_str(index_name, "index_name")?;
        require_out(out_model, "out_model")?;
        let model = read_committed_model(&ds, index_name)?;
        write_out(out_model, into_handle(model));
        Ok(())
    })
}

unsafe fn model_ref<'a>(model: *const LanceVectorModel) -> CResult<&'a LanceVectorModel> {
    handle_ref(model, "model")
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_serialize(
    model: *const LanceVectorModel,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> i32 {
    status(|| {
        let model = model_ref(model)?;
        require_out(out_bytes, "out_bytes")?;
        require_out(out_len, "out_len")?;
        let bytes = model.serialize();
        write_bytes_out(out_bytes, out_len, bytes);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_parse(
    bytes: *const u8,
    len: usize,
    out_model: *mut *mut LanceVectorModel,
) -> i32 {
    status(|| {
        require_out(out_model, "out_model")?;
        let bytes = slice_arg(bytes, len, "bytes")?;
        let model = LanceVectorModel::parse(bytes)?;
        write_out(out_model, into_handle(model));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_fingerprint(model: *const LanceVectorModel) -> *mut c_char {
    guard(std::ptr::null_mut(), || Ok(into_c_string(model_ref(model)?.fingerprint.clone())))
}

/// Mirrors `LanceVectorModelInfo` in lance.h.
#[repr(C)]
pub struct LanceVectorModelInfo {
    pub metric: i32,
    pub dimension: u32,
    pub num_partitions: u32,
    pub has_pq_codebook: bool,
    pub has_rq_rotation: bool,
    pub num_sub_vectors: u32,
    pub num_bits: u32,
}
crate::c_layout!(LanceVectorModelInfo, 24;
    metric @ 0,
    dimension @ 4,
    num_partitions @ 8,
    has_pq_codebook @ 12,
    has_rq_rotation @ 13,
    num_sub_vectors @ 16,
    num_bits @ 20,
);

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_info(
    model: *const LanceVectorModel,
    out: *mut LanceVectorModelInfo,
) -> i32 {
    status(|| {
        let m = model_ref(model)?;
        require_out(out, "out")?;
        write_out(
            out,
            LanceVectorModelInfo {
                metric: m.metric,
                // LanceVectorModel::new keeps every size within 32 bits.
                dimension: narrow(m.dim),
                num_partitions: narrow(m.num_partitions),
                has_pq_codebook: m.pq.is_some(),
                has_rq_rotation: m.rq.is_some(),
                num_sub_vectors: m.pq.as_ref().map_or(0, |p| narrow(p.num_sub_vectors)),
                num_bits: match (&m.pq, &m.rq) {
                    (Some(pq), _) => narrow(pq.num_bits),
                    (None, Some(rq)) => u32::from(rq.num_bits),
                    (None, None) => 0,
                },
            },
        );
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_index_type(
    model: *const LanceVectorModel,
    out_index_type: *mut i32,
) -> i32 {
    status(|| {
        let m = model_ref(model)?;
        require_out(out_index_type, "out_index_type")?;
        write_out(out_index_type, m.index_type);
        Ok(())
    })
}

/// Exports one part of a model as a FixedSizeList<float32>[n, dim].
unsafe fn export_part(
    model: *const LanceVectorModel,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
    part: impl FnOnce(&LanceVectorModel) -> CResult<Vec<f32>>,
) -> i32 {
    status(|| {
        let m = model_ref(model)?;
        require_out(out_array, "out_array")?;
        require_out(out_schema, "out_schema")?;
        export_array(&fsl(part(m)?, m.dim)?, out_array, out_schema)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_centroids(
    model: *const LanceVectorModel,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    export_part(model, out_array, out_schema, |m| Ok(m.centroids.clone()))
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_codebook(
    model: *const LanceVectorModel,
    out_array: *mut FFI_ArrowArray,
    out_schema: *mut FFI_ArrowSchema,
) -> i32 {
    export_part(model, out_array, out_schema, |m| {
        m.pq.as_ref().map(|pq| pq.codebook.clone()).ok_or_else(|| invalid("the model has no PQ codebook"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_vector_model_free(model: *mut LanceVectorModel) {
    free_handle(model);
}
