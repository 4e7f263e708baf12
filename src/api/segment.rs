//! lance.h section "Distributed index builds: uncommitted segments" (RFC
//! E1): a segment builder bound to one dataset snapshot builds an index
//! segment over a fragment subset without committing and returns the
//! segment's metadata as bytes.  The build itself is index/build.rs.

use std::ffi::c_char;
use std::sync::Arc;

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use lance::Dataset;
use lance_index::scalar::ScalarIndexParams;
use lance_index::IndexType;
use uuid::Uuid;

use crate::boundary::arrow::read_f32_list;
use crate::boundary::error::{guard_handle, invalid, not_supported, status, CResult};
use crate::boundary::ffi::{
    free_handle, handle_mut, handle_ref, optional_str, require_out, required_nonempty_str, slice_arg, write_bytes_out,
};
use crate::boundary::params::{build_mode, BuildMode, CoreParams, LanceVectorIndexParams};
use crate::boundary::training_options::{LanceVectorTrainingOptions, TrainingOptions};
use crate::index::build::{BuildRequest, LanceIndexSegmentBuilder, VectorSegment};
use crate::index::build_params::{pq_params, scalar_kind, scalar_params};
use crate::index::catalog::{check_partitions, check_vector_column, optional_index_name, require_column};
use crate::index::codec::encode_metadata;
use crate::index::injection::{vector_core_params, Injected};
use crate::index::kinds::core_picks_segment_uuid;
use crate::index::vector_model::LanceVectorModel;
use crate::store::handle::{dataset_ref, fragment_list, LanceDataset};

/// Mirrors `LanceIndexSegmentBuildOptions` in lance.h.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LanceIndexSegmentBuildOptions {
    pub fragment_ids: *const u32,
    pub fragment_count: usize,
    pub index_uuid: *const u8,
    pub ivf_centroids: *const FFI_ArrowArray,
    pub ivf_centroids_schema: *const FFI_ArrowSchema,
    pub pq_codebook: *const FFI_ArrowArray,
    pub pq_codebook_schema: *const FFI_ArrowSchema,
    pub mode: i32,
}
crate::c_layout!(LanceIndexSegmentBuildOptions, 64;
    fragment_ids @ 0,
    fragment_count @ 8,
    index_uuid @ 16,
    ivf_centroids @ 24,
    ivf_centroids_schema @ 32,
    pq_codebook @ 40,
    pq_codebook_schema @ 48,
    mode @ 56,
);

/// The options after their mode was validated (NULL = the defaults).
#[derive(Clone, Copy)]
struct Options {
    fragment_ids: *const u32,
    fragment_count: usize,
    index_uuid: *const u8,
    ivf_centroids: *const FFI_ArrowArray,
    ivf_centroids_schema: *const FFI_ArrowSchema,
    pq_codebook: *const FFI_ArrowArray,
    pq_codebook_schema: *const FFI_ArrowSchema,
    mode: BuildMode,
}

impl Options {
    unsafe fn from_c(o: *const LanceIndexSegmentBuildOptions) -> CResult<Self> {
        let Some(o) = o.as_ref() else {
            return Ok(Options {
                fragment_ids: std::ptr::null(),
                fragment_count: 0,
                index_uuid: std::ptr::null(),
                ivf_centroids: std::ptr::null(),
                ivf_centroids_schema: std::ptr::null(),
                pq_codebook: std::ptr::null(),
                pq_codebook_schema: std::ptr::null(),
                mode: BuildMode::Auto,
            });
        };
        Ok(Options {
            fragment_ids: o.fragment_ids,
            fragment_count: o.fragment_count,
            index_uuid: o.index_uuid,
            ivf_centroids: o.ivf_centroids,
            ivf_centroids_schema: o.ivf_centroids_schema,
            pq_codebook: o.pq_codebook,
            pq_codebook_schema: o.pq_codebook_schema,
            mode: build_mode(o.mode)?,
        })
    }

    fn has_model(&self) -> bool {
        !self.ivf_centroids.is_null() || !self.pq_codebook.is_null()
    }
}

/// The optional 16-byte caller UUID.
unsafe fn segment_uuid(ptr: *const u8) -> CResult<Option<Uuid>> {
    if ptr.is_null() {
        return Ok(None);
    }
    let bytes = slice_arg(ptr, 16, "options->index_uuid")?;
    Ok(Some(Uuid::from_bytes(bytes.try_into().expect("16 bytes"))))
}

/// The model the options carry as Arrow arrays, if any.
unsafe fn options_model(o: &Options, p: &LanceVectorIndexParams) -> CResult<Option<Injected>> {
    if o.ivf_centroids.is_null() {
        if !o.pq_codebook.is_null() {
            return Err(invalid(
                "options->pq_codebook needs options->ivf_centroids: the codebook is trained on IVF residuals",
            ));
        }
        return Ok(None);
    }
    let (centroids, dim) = read_f32_list(o.ivf_centroids, o.ivf_centroids_schema, "options->ivf_centroids")?;
    let codebook = if o.pq_codebook.is_null() {
        None
    } else {
        let (values, width) = read_f32_list(o.pq_codebook, o.pq_codebook_schema, "options->pq_codebook")?;
        // Rows of the full dimension (2^bits of them), or of one sub-vector
        // (sub-vectors * 2^bits): the same values either way.
        let sub_vectors = pq_params(p).num_sub_vectors;
        if width != dim && width * sub_vectors != dim {
            return Err(invalid(format!(
                "options->pq_codebook has rows of {width} values; with dimension {dim} and {sub_vectors} \
                 sub-vectors they must hold {dim} or {} values",
                dim / sub_vectors.max(1)
            )));
        }
        Some(values)
    };
    Injected::from_arrays(centroids, dim, codebook, p).map(Some)
}

/// A vector segment build over its converted arguments.
unsafe fn vector_builder(p: LanceVectorIndexParams, c: Common) -> CResult<LanceIndexSegmentBuilder> {
    if c.o.mode == BuildMode::LocalTrain && c.o.has_model() {
        return Err(invalid(
            "options->mode is LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN but the options hold a model; \
             use AUTO or PRECOMPUTED to build with it",
        ));
    }
    check_vector_column(&c.ds, &c.column, p.metric)?;
    let dim = lance::index::vector::utils::get_vector_dim(c.ds.schema(), &c.column)?;
    let model = options_model(&c.o, &p)?;
    if model.is_none() && c.o.mode == BuildMode::Precomputed {
        return Err(invalid(
            "options->mode is LANCE_INDEX_SEGMENT_BUILD_PRECOMPUTED but no model is given: set \
             options->ivf_centroids (and options->pq_codebook for the PQ types)",
        ));
    }
    // A build that trains needs rows for its partitions: checked here when
    // it must train, and when it runs when a model may still be given.
    let trains_partitions = if model.is_none() { p.num_partitions } else { 0 };
    if c.o.mode == BuildMode::LocalTrain {
        check_partitions(&c.ds, trains_partitions, c.fragments.as_deref())?;
    }
    let vector = VectorSegment { params: p, mode: c.o.mode, model_in_options: model.is_some() };
    let (index_type, vector_params) = vector_core_params(&p, &c.column, dim, model)?;
    let request = c.request(index_type, CoreParams::Vector(vector_params), trains_partitions);
    Ok(LanceIndexSegmentBuilder::new(request, Some(vector)))
}

/// A scalar segment build over its converted arguments.
fn scalar_builder(index_type: IndexType, params: ScalarIndexParams, c: Common) -> CResult<LanceIndexSegmentBuilder> {
    if c.o.has_model() {
        return Err(invalid("a scalar index takes no vector model"));
    }
    if c.o.mode == BuildMode::Precomputed {
        return Err(invalid(
            "options->mode asks for a precomputed model, which only vector builds take; scalar segments always train",
        ));
    }
    // The core generates the UUIDs of these fragment-scoped builds itself;
    // a caller's UUID would be ignored, so it is refused here.
    if c.uuid.is_some() && c.fragments.is_some() && core_picks_segment_uuid(index_type) {
        return Err(not_supported(format!(
            "Lance {} does not accept a caller-assigned segment UUID for fragment-scoped {:?} builds; \
             leave options->index_uuid NULL and read the UUID from the segment metadata",
            crate::LANCE_CORE_VERSION,
            index_type
        )));
    }
    Ok(LanceIndexSegmentBuilder::new(c.request(index_type, CoreParams::Scalar(params), 0), None))
}

/// What every segment builder takes, checked the same way.
struct Common {
    ds: Arc<Dataset>,
    column: String,
    name: Option<String>,
    o: Options,
    fragments: Option<Vec<u32>>,
    uuid: Option<Uuid>,
}

impl Common {
    /// The build these arguments ask for (a segment never replaces an index).
    fn request(self, index_type: IndexType, params: CoreParams, trains_partitions: u32) -> BuildRequest {
        let Common { ds, column, name, o: _, fragments, uuid } = self;
        BuildRequest {
            dataset: ds,
            column,
            name,
            index_type,
            params,
            fragments,
            uuid,
            replace: false,
            trains_partitions,
        }
    }
}

unsafe fn common_args(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    options: *const LanceIndexSegmentBuildOptions,
) -> CResult<Common> {
    let o = Options::from_c(options)?;
    let ds = dataset_ref(dataset)?.snapshot();
    let column = required_nonempty_str(column, "column")?.to_string();
    let name = optional_index_name(index_name)?;
    require_column(&ds, &column)?;
    let fragments = fragment_list(&ds, o.fragment_ids, o.fragment_count, "options->fragment_ids")?;
    let uuid = segment_uuid(o.index_uuid)?;
    Ok(Common { ds, column, name, o, fragments, uuid })
}

/// `LanceVectorIndexSegmentParams` has the layout of `LanceVectorIndexParams`
/// (lance.h; the conformance test checks both).
#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_new_vector(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    params: *const LanceVectorIndexParams,
    options: *const LanceIndexSegmentBuildOptions,
) -> *mut LanceIndexSegmentBuilder {
    guard_handle(|| {
        let p = *handle_ref(params, "params")?;
        vector_builder(p, common_args(dataset, column, index_name, options)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_new_scalar(
    dataset: *const LanceDataset,
    column: *const c_char,
    index_name: *const c_char,
    index_type: i32,
    params_json: *const c_char,
    options: *const LanceIndexSegmentBuildOptions,
) -> *mut LanceIndexSegmentBuilder {
    guard_handle(|| {
        let (index_type, kind) = scalar_kind(index_type)?;
        let params = scalar_params(kind, optional_str(params_json, "params_json")?)?;
        scalar_builder(index_type, params, common_args(dataset, column, index_name, options)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_model(
    builder: *mut LanceIndexSegmentBuilder,
    model: *const LanceVectorModel,
) -> i32 {
    status(|| {
        // A builder already executed is refused before its model is read.
        let builder = handle_mut(builder, "builder")?.unexecuted()?;
        builder.set_model(handle_ref(model, "model")?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_set_training_options(
    builder: *mut LanceIndexSegmentBuilder,
    options: *const LanceVectorTrainingOptions,
) -> i32 {
    status(|| {
        let builder = handle_mut(builder, "builder")?;
        builder.set_training(TrainingOptions::from_c(options.as_ref())?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_execute_uncommitted(
    builder: *mut LanceIndexSegmentBuilder,
    out_metadata_bytes: *mut *mut u8,
    out_metadata_len: *mut usize,
) -> i32 {
    status(|| {
        let builder = handle_mut(builder, "builder")?;
        require_out(out_metadata_bytes, "out_metadata_bytes")?;
        require_out(out_metadata_len, "out_metadata_len")?;
        let metadata = builder.execute()?;
        let bytes = encode_metadata(&metadata);
        write_bytes_out(out_metadata_bytes, out_metadata_len, bytes);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn lance_index_segment_builder_free(builder: *mut LanceIndexSegmentBuilder) {
    free_handle(builder);
}
