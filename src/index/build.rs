//! The one build runner: every index build the library runs, one-shot
//! (built and committed) or a segment (built, not committed), goes through
//! here.  It picks the segment UUID, configures the core's builder, runs the
//! build under its progress and cancel control, and removes what a
//! cancelled build wrote.

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use lance::index::{CreateIndexBuilder, DatasetIndexExt};
use lance::Dataset;
use lance_index::IndexType;
use lance_io::object_store::{ObjectStore, ObjectStoreRegistry};
use lance_table::format::IndexMetadata;
use uuid::Uuid;

use crate::boundary::error::{invalid, CError, CResult, Code, Context};
use crate::boundary::params::{BuildMode, CoreParams, LanceVectorIndexParams};
use crate::boundary::training_options::TrainingOptions;
use crate::index::catalog::{check_partitions, live_rows, require_column};
use crate::index::injection::{vector_core_params, Injected};
use crate::index::kinds::core_picks_segment_uuid;
use crate::index::progress::{cancelled_error, BuildControl};
use crate::index::training::{train_alone, Plan};
use crate::index::vector_model::LanceVectorModel;
use crate::process::runtime::block_on;
use crate::store::handle::LanceDataset;
use crate::store::store_gate::{spawn_cleanup, Gate, GateWrapper};
use crate::store::uploads::{self, abort_under, lists_uploads};

/// What to build.
pub struct BuildRequest {
    /// The snapshot the build reads (and, one-shot, commits on top of).
    pub dataset: Arc<Dataset>,
    pub column: String,
    /// None = the core's default name.
    pub name: Option<String>,
    pub index_type: IndexType,
    pub params: CoreParams,
    /// None = every fragment.
    pub fragments: Option<Vec<u32>>,
    /// A caller-assigned segment UUID; it must be unused.
    pub uuid: Option<Uuid>,
    /// One-shot only: replace an existing index of the same name.
    pub replace: bool,
    /// A vector build that trains: the partition count its fragments must
    /// have rows for, checked when it runs (0 = no check).
    pub trains_partitions: u32,
}

/// A segment build waiting to run: made by lance.h's "uncommitted segments"
/// section, configured by its "progress and cancellation" section.
pub struct LanceIndexSegmentBuilder {
    /// None once executed: builders are single-use.
    request: Option<BuildRequest>,
    pub control: BuildControl,
    /// A vector build as its C arguments described it, so a model given
    /// later (lance_index_segment_builder_set_model) can be applied; None
    /// for scalar builds.
    pub vector: Option<VectorSegment>,
    /// lance_index_segment_builder_set_training_options; applied when the
    /// build runs, so a model given later keeps them.
    training: TrainingOptions,
    /// A model was given (options or set_model): nothing to train.
    has_model: bool,
}

/// What a vector segment builder was made with.
#[derive(Clone, Copy)]
pub struct VectorSegment {
    pub params: LanceVectorIndexParams,
    pub mode: BuildMode,
    /// The options carried the model as Arrow arrays.
    pub model_in_options: bool,
}

impl LanceIndexSegmentBuilder {
    pub fn new(request: BuildRequest, vector: Option<VectorSegment>) -> Self {
        let has_model = vector.is_some_and(|v| v.model_in_options);
        Self {
            request: Some(request),
            control: BuildControl::default(),
            vector,
            training: TrainingOptions::default(),
            has_model,
        }
    }

    /// Builder settings are refused once the build ran: they could not apply.
    pub fn unexecuted(&mut self) -> CResult<&mut Self> {
        if self.request.is_none() {
            return Err(invalid("the segment builder was already executed; settings no longer apply"));
        }
        Ok(self)
    }

    /// Gives a vector build its model (lance_index_segment_builder_set_model):
    /// the build then uses the model's centroids (codebook, rotation) instead
    /// of training.  Refused for scalar builds, for builders whose options
    /// already carry a model, for LOCAL_TRAIN builders, and once executed.
    pub fn set_model(&mut self, model: &LanceVectorModel) -> CResult<()> {
        let vector =
            self.unexecuted()?.vector.ok_or_else(|| invalid("a scalar segment builder takes no vector model"))?;
        if vector.model_in_options {
            return Err(invalid(
                "the builder's options already hold a model (options->ivf_centroids); give it one way only",
            ));
        }
        if vector.mode == BuildMode::LocalTrain {
            return Err(invalid(
                "the builder was made with LANCE_INDEX_SEGMENT_BUILD_LOCAL_TRAIN, which trains and refuses a model",
            ));
        }
        self.inject(model, &vector.params)
    }

    /// Builds with `model` (checked against `params`) instead of training.
    fn inject(&mut self, model: &LanceVectorModel, params: &LanceVectorIndexParams) -> CResult<()> {
        let request = self.request_mut()?;
        let dim = lance::index::vector::utils::get_vector_dim(request.dataset.schema(), &request.column)?;
        let injected = Injected::from_model(model, params)?;
        let (index_type, core) = vector_core_params(params, &request.column, dim, Some(injected))?;
        request.index_type = index_type;
        request.params = CoreParams::Vector(core);
        request.trains_partitions = 0;
        self.has_model = true;
        Ok(())
    }

    /// The core's training options for this build (a vector builder only).
    pub fn set_training(&mut self, options: TrainingOptions) -> CResult<()> {
        if self.unexecuted()?.vector.is_none() {
            return Err(invalid("a scalar segment builder takes no training options"));
        }
        self.training = options;
        Ok(())
    }

    /// A seeded build that trains: its model, trained here with the seeded
    /// rounds over the builder's fragments, then given to the build.
    fn train_seeded(&mut self) -> CResult<()> {
        let (Some(seed), Some(vector), false, true) =
            (self.training.seed, self.vector, self.has_model, self.request.is_some())
        else {
            return Ok(());
        };
        if self.control.cancelled() {
            return Err(cancelled_error("before it started"));
        }
        let request = self.request_mut()?;
        let (ds, column, fragments) = (request.dataset.clone(), request.column.clone(), request.fragments.clone());
        let mut p = vector.params;
        if p.num_partitions == 0 {
            p.num_partitions = self.training.num_partitions(p.index_type, live_rows(&ds, fragments.as_deref())?)?;
        }
        check_partitions(&ds, p.num_partitions, fragments.as_deref())?;
        let plan = Plan::from_params(&column, &p, seed)?;
        let model = train_alone(ds, fragments, plan, &mut self.control.steps("the segment's seeded training"))?;
        self.inject(&model, &p)
    }

    /// What the training options ask before the build runs: a seeded
    /// model, and the core's options in the build's parameters.
    fn prepare(&mut self) -> CResult<()> {
        self.train_seeded()?;
        let (options, vector) = (self.training, self.vector);
        if let (Some(request), Some(vector)) = (self.request.as_mut(), vector) {
            let rows = if options.streams() { live_rows(&request.dataset, request.fragments.as_deref())? } else { 0 };
            if let CoreParams::Vector(params) = &mut request.params {
                options.apply(params, vector.params.index_type, rows)?;
            }
        }
        Ok(())
    }

    /// The build still to run (refused once executed).
    pub fn request_mut(&mut self) -> CResult<&mut BuildRequest> {
        self.request
            .as_mut()
            .ok_or_else(|| invalid("the segment builder was already executed; settings no longer apply"))
    }

    /// Runs the build once: the segment's metadata.
    pub fn execute(&mut self) -> CResult<IndexMetadata> {
        // Single-use even when it fails before the build.
        if let Err(err) = self.prepare() {
            self.request = None;
            return Err(err);
        }
        let request = self
            .request
            .take()
            .ok_or_else(|| invalid("the segment builder was already executed; builders are single-use"))?;
        request.build_segment(&self.control)
    }
}

enum Built {
    Committed(Dataset),
    Segment(IndexMetadata),
}

impl BuildRequest {
    /// Builds and commits: the dataset at its new version.
    pub fn build_and_commit(self, control: &BuildControl) -> CResult<Dataset> {
        match self.run(control, true)? {
            Built::Committed(ds) => Ok(ds),
            Built::Segment(_) => unreachable!("a committing build returns the dataset"),
        }
    }

    /// Builds one segment without committing: its metadata.
    pub fn build_segment(self, control: &BuildControl) -> CResult<IndexMetadata> {
        match self.run(control, false)? {
            Built::Segment(metadata) => Ok(metadata),
            Built::Committed(_) => unreachable!("a segment build returns its metadata"),
        }
    }

    fn run(self, control: &BuildControl, commit: bool) -> CResult<Built> {
        // A cancel requested before the build starts wins over every check.
        if control.cancelled() {
            return Err(cancelled_error("before it started"));
        }
        check_partitions(&self.dataset, self.trains_partitions, self.fragments.as_deref())?;
        if matches!(self.params, CoreParams::Vector(_)) {
            check_spill_dir()?;
        }
        // The core picks the UUID of fragment-scoped BTREE, LABEL_LIST,
        // NGRAM and RTREE builds itself; every other build gets one from
        // here, so the files of a cancelled build can be found and removed.
        let core_picks_uuid = self.fragments.is_some() && core_picks_segment_uuid(self.index_type);
        let uuid = self.uuid.or_else(|| (!core_picks_uuid).then(Uuid::new_v4));
        let session = control.start()?;
        // A segment build on s3:// whose files can be found writes through a
        // store client of its own, so it too can be stopped anywhere: its
        // writes pass through a gate that the cancel closes, waiting only
        // for those in flight and aborting the uploads it left open
        // (store/store_gate.rs); dropping its runtime drops only its own
        // connections; what it wrote is removed after the return
        // (`remove_after_return`).  (A dataset with extra base paths reaches
        // them through the session's shared clients: it stops at checkpoints.)
        let own_store =
            uuid.is_some() && !commit && lists_uploads(&self.dataset) && self.dataset.manifest().base_paths.is_empty();
        if own_store {
            uploads::prepare(&self.dataset);
        }
        let gate = own_store.then(|| Arc::new(Gate::default()));
        let build_gate = gate.clone();
        let abort_anywhere = uuid.is_some() && (own_store || on_local_disk(&self.dataset)?);
        // Last, since it writes (the claim): from here on every way out of a
        // cancelled build removes the segment's directory.
        if let Some(uuid) = self.uuid {
            check_uuid_unused(&self.dataset, uuid)?;
        }
        let hooks = session.hooks();
        let BuildRequest { dataset, column, name, index_type, params, fragments, replace, .. } = self;
        // The build owns what it uses: it may run on a runtime thread.
        let mut ds = Dataset::clone(&dataset);
        let what = format!("building an index on column '{column}'");
        let build = async move {
            if let Some(gate) = build_gate {
                ds = with_own_store(&ds, gate).await?;
            }
            let columns = [column.as_str()];
            // A segment may extend an index of the same name (fragments
            // appended since it was built): the commit decides, not the build.
            let mut builder =
                CreateIndexBuilder::new(&mut ds, &columns, index_type, params.as_dyn()).replace(replace || !commit);
            if let Some(name) = name {
                builder = builder.name(name);
            }
            if let Some(fragments) = fragments {
                builder = builder.fragments(fragments);
            }
            if let Some(uuid) = uuid {
                builder = builder.index_uuid(uuid);
            }
            if let Some(hooks) = hooks {
                builder = builder.progress(hooks);
            }
            if commit {
                builder.into_future().await?;
                Ok(Built::Committed(ds))
            } else {
                Ok(Built::Segment(builder.execute_uncommitted().await?))
            }
        };
        // A build on the local file system or a segment build on s3:// whose
        // files this library can find (it chose the UUID) may be stopped in
        // any stage; the others are abandoned at once while they have
        // written nothing to the store (training and the shuffle,
        // index/progress.rs) and otherwise run to a checkpoint.  Elsewhere an
        // abort would leave multipart uploads open that this library cannot
        // list (their abort is spawned on the build's runtime, which is
        // shutting down), and for a one-shot build could race its commit's
        // conditional PUT.
        let built = match session.run(build, abort_anywhere, gate.clone()) {
            Ok(built) => built,
            Err(err) if err.code == Code::Cancelled => {
                let Some(uuid) = uuid else { return Err(err) };
                // A one-shot build stopped at once may have been stopped in
                // its commit: if the commit landed, the build succeeded.
                if commit && abort_anywhere {
                    match committed_with(&dataset, uuid) {
                        Ok(Some(committed)) => return Ok(Built::Committed(committed)),
                        Ok(None) => {}
                        Err(e) => {
                            return Err(CError::new(
                                err.code,
                                format!(
                                    "{}; whether its commit landed could not be checked, so its files \
                                         under _indices/{uuid} were kept: {}",
                                    err.message, e.message
                                ),
                            ))
                        }
                    }
                }
                // Stopped at its gate: the aborts of the uploads it left
                // open have started, and nothing more of it can be written.
                if gate.is_some_and(|gate| gate.uploads_settled()) {
                    return Err(remove_after_return(&dataset, uuid, err));
                }
                return Err(remove_segment_files(&dataset, uuid, err));
            }
            Err(err) => return Err(err).context(what),
        };
        // A cancel that came after a segment build's last checkpoint (some
        // builds do their heavy work after it) is honoured here, before
        // returning.  (A one-shot build has committed by now: it stands.)
        if let Built::Segment(metadata) = &built {
            if control.cancelled() {
                return Err(remove_segment_files(
                    &dataset,
                    metadata.uuid,
                    cancelled_error("before the build returned"),
                ));
            }
        }
        Ok(built)
    }
}

/// One-shot creation (lance.h "Indices"): `make` gives the index type and
/// parameters once the column is known to exist in the handle's version;
/// the build runs and commits on top of that version.
pub fn create_one_shot(
    handle: &LanceDataset,
    column: &str,
    name: Option<String>,
    replace: bool,
    control: &BuildControl,
    make: impl FnOnce(&Dataset, &str) -> CResult<(IndexType, CoreParams)>,
) -> CResult<()> {
    handle.mutate(|ds| {
        require_column(ds, column)?;
        let (index_type, params) = make(ds, column)?;
        let request = BuildRequest {
            dataset: Arc::new(Dataset::clone(ds)),
            column: column.to_string(),
            name,
            index_type,
            params,
            fragments: None,
            uuid: None,
            replace,
            trains_partitions: 0,
        };
        *ds = request.build_and_commit(control)?;
        Ok(())
    })
}

/// A caller-assigned UUID must be new.  Building into the UUID of a
/// segment that is committed (a worker task retried after its coordinator
/// committed) would overwrite files a committed index reads.
fn check_uuid_unused(ds: &Dataset, uuid: Uuid) -> CResult<()> {
    let dir = ds.indices_dir().join(uuid.to_string());
    let (existing_files, latest_indices) = block_on(async {
        let store = ds.object_store(None).await?;
        let files = if store.is_local() {
            // The local store does not list the files it is still writing
            // ("index.idx#1"), which is what a worker killed mid-write
            // leaves: look at the directory itself.
            match std::fs::read_dir(format!("/{dir}")) {
                Ok(entries) => {
                    entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(lance::Error::io(format!("reading {dir}: {e}"))),
            }
        } else {
            match store.read_dir(dir.clone()).await {
                Ok(files) => files,
                Err(lance::Error::NotFound { .. }) => Vec::new(),
                Err(err) => return Err(err),
            }
        };
        let mut latest = Dataset::clone(ds);
        latest.checkout_latest().await?;
        let indices = latest.load_indices().await?;
        Ok::<_, lance::Error>((files, indices))
    })??;
    if let Some(committed) = latest_indices.iter().find(|i| i.uuid == uuid) {
        return Err(CError::new(
            Code::DuplicateSegment,
            format!(
                "options->index_uuid {uuid} is already committed as a segment of index '{}'; a retried build needs a new UUID",
                committed.name
            ),
        ));
    }
    if !existing_files.is_empty() {
        return Err(CError::new(
            Code::DuplicateSegment,
            format!(
                "options->index_uuid {uuid} is in use: _indices/{uuid} already holds files ({}); a retried build needs a new UUID",
                existing_files.join(", ")
            ),
        ));
    }
    claim_uuid(ds, uuid)
}

/// The file that marks a caller-assigned segment UUID as taken.
pub const CLAIM_FILE: &str = "lance-c.claim";

/// Claims a caller-assigned UUID before anything of the build is written:
/// of concurrent attempts with one UUID (a retried task racing the original,
/// speculative execution) exactly one creates `_indices/<uuid>/lance-c.claim`
/// (the core's put-if-absent: a conditional rename on local disk, a
/// conditional put on object stores); the others fail with
/// DUPLICATE_SEGMENT.  Stores without put-if-absent (the core refuses it on
/// Tencent COS) keep only the checks made before.
fn claim_uuid(ds: &Dataset, uuid: Uuid) -> CResult<()> {
    let claim = ds.indices_dir().join(uuid.to_string()).join(CLAIM_FILE);
    let claimed = block_on(async {
        let store = ds.object_store(None).await?;
        let payload =
            object_store::PutPayload::from(format!("segment {uuid} claimed by process {}\n", std::process::id()));
        Ok::<_, lance::Error>(store.put_if_absent(&claim, payload).await)
    })??;
    match claimed {
        Ok(()) | Err(object_store::Error::NotSupported { .. }) => Ok(()),
        Err(object_store::Error::AlreadyExists { .. }) => Err(CError::new(
            Code::DuplicateSegment,
            format!(
                "options->index_uuid {uuid} was claimed by another build at the same moment; a retried build needs a new UUID"
            ),
        )),
        Err(e) => Err(CError::new(Code::Io, format!("claiming segment UUID {uuid} ({claim}): {e}"))),
    }
}

/// What a segment build killed in the middle of writing a file leaves under
/// `_indices/<uuid>/` on local storage: only files still under the local
/// store's temporary names ("index.idx#1"), which its listings (and so the
/// core's cleanup) never show.  Removes such directories when none of their
/// files is finished, their UUID is no segment of the latest version, and
/// nothing in them changed for `older_than`.  Returns (files, bytes) removed.
pub fn reclaim_unfinished_segments(ds: &Dataset, older_than: std::time::Duration) -> CResult<(u64, u64)> {
    let root = format!("/{}", ds.indices_dir());
    let (is_local, latest) = block_on(async {
        let store = ds.object_store(None).await?;
        let mut latest = Dataset::clone(ds);
        latest.checkout_latest().await?;
        let indices = latest.load_indices().await?;
        Ok::<_, lance::Error>((store.is_local(), indices))
    })??;
    let entries = match std::fs::read_dir(&root) {
        Ok(entries) if is_local => entries,
        _ => return Ok((0, 0)),
    };
    let unfinished =
        |name: &str| name.rsplit_once('#').is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let (mut files, mut bytes) = (0u64, 0u64);
    for entry in entries.filter_map(|e| e.ok()) {
        let Some(uuid) = entry.file_name().to_str().and_then(|n| Uuid::parse_str(n).ok()) else { continue };
        if latest.iter().any(|i| i.uuid == uuid) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(inside) = std::fs::read_dir(entry.path()) else { continue };
        let mut found = Vec::new();
        let mut reclaimable = true;
        for f in inside.filter_map(|e| e.ok()) {
            let meta = f.metadata().ok();
            let fresh = meta
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_none_or(|age| age < older_than);
            let name = f.file_name().to_string_lossy().into_owned();
            if name == CLAIM_FILE && !fresh {
                // A claim alone is what a worker killed before writing leaves.
                found.push(meta.map_or(0, |m| m.len()));
                continue;
            }
            if !unfinished(&name) || fresh || !meta.as_ref().is_some_and(|m| m.is_file()) {
                reclaimable = false;
                break;
            }
            found.push(meta.map_or(0, |m| m.len()));
        }
        if reclaimable && !found.is_empty() && std::fs::remove_dir_all(entry.path()).is_ok() {
            files += found.len() as u64;
            bytes += found.iter().sum::<u64>();
        }
    }
    Ok((files, bytes))
}

/// Vector builds spill their shuffle under the temporary directory
/// (process/temp.rs; the core creates it with `tempfile::tempdir`, which
/// cannot fail gracefully): one that is not a directory is refused up front.
fn check_spill_dir() -> CResult<()> {
    let dir = crate::process::temp::base();
    if !dir.is_dir() {
        return Err(invalid(format!(
            "the temporary directory {} (the process budget's, else TMPDIR) does not exist or is not a directory; \
             index builds spill there",
            dir.display()
        )));
    }
    Ok(())
}

/// Whether the dataset is on the local file system.
fn on_local_disk(dataset: &Dataset) -> CResult<bool> {
    Ok(block_on(dataset.object_store(None))??.is_local())
}

/// The dataset at its latest version if that version holds index `uuid`
/// (a one-shot build's commit landed before the build was stopped).
fn committed_with(dataset: &Dataset, uuid: Uuid) -> CResult<Option<Dataset>> {
    let mut latest = dataset.clone();
    block_on(async move {
        latest.checkout_latest().await?;
        let indices = latest.load_indices().await?;
        Ok::<_, lance::Error>(indices.iter().any(|i| i.uuid == uuid).then_some(latest))
    })?
    .context("looking for the commit of a cancelled one-shot index build")
}

/// Removes what a cancelled build wrote for segment `uuid`.  The outcome
/// goes into the error message; the error stays CANCELLED.
fn remove_segment_files(ds: &Dataset, uuid: Uuid, err: CError) -> CError {
    let dir = ds.indices_dir().join(uuid.to_string());
    // The path as the caller named the dataset (the store's path has no scheme or leading '/').
    let shown = format!("{}/_indices/{uuid}", ds.uri().trim_end_matches('/'));
    // First the uploads a build stopped mid-file left open (s3://), so that
    // no part of them can be completed into a file after the removal.
    if lists_uploads(ds) {
        if let Err(e) = abort_under(ds, &format!("_indices/{uuid}/"), Duration::ZERO) {
            return CError::new(
                err.code,
                format!(
                    "{}; aborting its incomplete uploads under {shown} failed, its files were kept: {}",
                    err.message, e.message
                ),
            );
        }
    }
    let removed = block_on(async {
        let store = ds.object_store(None).await?;
        match store.remove_dir_all(dir.clone()).await {
            Err(e) if !is_missing(&e) => Err(e),
            _ => Ok(()),
        }
    });
    match removed {
        Ok(Ok(())) => CError::new(err.code, format!("{}; its segment files under {shown} were removed", err.message)),
        Ok(Err(e)) => CError::new(err.code, format!("{}; removing its files under {shown} failed: {e}", err.message)),
        Err(e) => {
            CError::new(err.code, format!("{}; removing its files under {shown} failed: {}", err.message, e.message))
        }
    }
}

/// Removes what a build stopped at its gate (store/store_gate.rs) wrote for
/// segment `uuid`, after the return: its files, then any incomplete upload
/// still listed under its directory (the gate has started aborting those
/// it knew of; this sweep, with a client of its own, catches an abort that
/// failed or a part that landed after it), then its claim, last, so that a
/// build retried with the UUID meanwhile fails with DUPLICATE_SEGMENT (it
/// finds the claim, or files) instead of writing files the removal then
/// takes.  Where that cannot start, removes them now.
fn remove_after_return(ds: &Dataset, uuid: Uuid, err: CError) -> CError {
    let shown = format!("{}/_indices/{uuid}", ds.uri().trim_end_matches('/'));
    let sweep = match uploads::aborting_under(ds, &format!("_indices/{uuid}/"), Duration::ZERO) {
        Ok(sweep) => sweep,
        Err(_) => return remove_segment_files(ds, uuid, err),
    };
    let dataset = Dataset::clone(ds);
    let started = spawn_cleanup(async move {
        let ds = dataset;
        let dir = ds.indices_dir().join(uuid.to_string());
        let claim = dir.clone().join(CLAIM_FILE);
        let Ok(store) = ds.object_store(None).await else { return };
        let Ok(files) = store.inner.list(Some(&dir)).map_ok(|meta| meta.location).try_collect::<Vec<_>>().await else {
            return;
        };
        let others: Vec<_> = files.into_iter().filter(|file| *file != claim).map(Ok).collect();
        let removed = store.inner.delete_stream(futures::stream::iter(others).boxed()).try_collect::<Vec<_>>().await;
        if removed.is_ok() && sweep.await.is_ok() {
            let _ = store.delete(&claim).await;
        }
    });
    if !started {
        return remove_segment_files(ds, uuid, err);
    }
    CError::new(
        err.code,
        format!(
            "{}; nothing more of it is written, and its files under {shown} and its incomplete uploads are \
             being removed (lance.h \"Cancellation\")",
            err.message
        ),
    )
}

/// The dataset bound to an object-store client of its own, made on the
/// calling runtime (a build's), so that shutting that runtime down drops
/// only connections nobody else uses, with `gate` in front of its writes.
/// The data cache wrapper, if any, comes along in the store parameters.
async fn with_own_store(ds: &Dataset, gate: Arc<Gate>) -> lance::Result<Dataset> {
    let mut params = ds.store_params().cloned().unwrap_or_default();
    params.object_store_wrapper = Some(Arc::new(GateWrapper { gate, inner: params.object_store_wrapper.take() }));
    let registry = Arc::new(ObjectStoreRegistry::default());
    let (store, _) = ObjectStore::from_uri_and_params(registry, ds.uri(), &params).await?;
    Ok(ds.with_object_store(store, Some(params)))
}

/// A removal that failed only because there was nothing to remove.
fn is_missing(err: &lance::Error) -> bool {
    matches!(err, lance::Error::NotFound { .. }) || err.to_string().contains("No such file or directory")
}
