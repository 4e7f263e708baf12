//! `LanceVectorTrainingOptions` as it arrives from C, checked, and applied
//! to the core's IVF training parameters: a target partition size,
//! streaming k-means, and the seed that chooses this library's rounds over
//! the core's trainer.

use lance::index::vector::{StageParams, VectorIndexParams};
use lance_index::vector::ivf::builder::recommended_num_partitions;
use lance_index::vector::ivf::IvfBuildParams;

use crate::boundary::error::{invalid, not_supported, CResult};
use crate::boundary::params::vector_index_type;

/// Mirrors `LanceVectorTrainingOptions` in lance.h.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct LanceVectorTrainingOptions {
    pub target_partition_size: u32,
    pub streaming_sample_rate: u32,
    pub streaming_coreset_rate: u32,
    pub streaming_refine_passes: u32,
    pub use_seed: u32,
    pub reserved: u32,
    pub seed: u64,
}
crate::c_layout!(LanceVectorTrainingOptions, 32;
    target_partition_size @ 0,
    streaming_sample_rate @ 4,
    streaming_coreset_rate @ 8,
    streaming_refine_passes @ 12,
    use_seed @ 16,
    reserved @ 20,
    seed @ 24,
);

/// The streaming k-means options of the core's IVF trainer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streaming {
    pub sample_rate: usize,
    pub coreset_rate: Option<usize>,
    pub refine_passes: usize,
}

/// `LanceVectorTrainingOptions`, checked: what each field asks of a training.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrainingOptions {
    pub target_partition_size: Option<usize>,
    pub streaming: Option<Streaming>,
    /// A seeded training runs the library's rounds (the core's trainer
    /// takes no seed).
    pub seed: Option<u64>,
}

impl TrainingOptions {
    /// Checks the C struct; `o` None (a NULL pointer) is every default.
    pub fn from_c(o: Option<&LanceVectorTrainingOptions>) -> CResult<Self> {
        let Some(o) = o else { return Ok(Self::default()) };
        if o.reserved != 0 {
            return Err(invalid(format!("options->reserved = {} must be 0", o.reserved)));
        }
        let streaming = if o.streaming_sample_rate == 0 {
            for (value, name) in [
                (o.streaming_coreset_rate, "options->streaming_coreset_rate"),
                (o.streaming_refine_passes, "options->streaming_refine_passes"),
            ] {
                if value != 0 {
                    return Err(invalid(format!(
                        "{name} = {value} needs options->streaming_sample_rate (streaming k-means), which is 0"
                    )));
                }
            }
            None
        } else {
            Some(Streaming {
                sample_rate: o.streaming_sample_rate as usize,
                coreset_rate: (o.streaming_coreset_rate != 0).then_some(o.streaming_coreset_rate as usize),
                refine_passes: o.streaming_refine_passes as usize,
            })
        };
        let seed = (o.use_seed != 0).then_some(o.seed);
        if seed.is_some() && streaming.is_some() {
            return Err(not_supported(
                "a seeded training cannot stream: the core's streaming k-means takes no seed (lance-index-14.0.2 \
                 src/vector/ivf/builder.rs, IvfBuildParams), and a seed runs this library's training rounds, which \
                 do not stream; drop options->use_seed or the streaming options",
            ));
        }
        let target_partition_size = (o.target_partition_size != 0).then_some(o.target_partition_size as usize);
        Ok(Self { target_partition_size, streaming, seed })
    }

    /// Whether the options stream: a caller then passes the rows trained on
    /// to `apply_ivf` and `apply` (counting them costs a pass over the
    /// fragments' metadata).
    pub fn streams(&self) -> bool {
        self.streaming.is_some()
    }

    /// Gives the core's IVF parameters these options (the seed is not the
    /// core's: it chooses the trainer), for a training over `rows` rows of
    /// a `index_type` index (`rows` is needed only when `streams()`).
    ///
    /// The core's streaming trainers fail ("Not enough training vectors for
    /// streaming ... sampled 0 rows", lance-14.0.2 src/index/vector/ivf.rs,
    /// `train_streaming_ivf_model` and `train_streaming_coreset_ivf_model`)
    /// when a chunk after the first finds the rows used up: when the rows
    /// are fewer than the sample (num_partitions * sample_rate).  So the
    /// sample rate is lowered to the whole chunks the rows hold (at least
    /// one chunk, which the core trains on without streaming), and the
    /// coreset rate to at most it, as the core requires.
    pub fn apply_ivf(&self, ivf: &mut IvfBuildParams, index_type: i32, rows: u64) -> CResult<()> {
        if self.target_partition_size.is_some() {
            ivf.target_partition_size = self.target_partition_size;
        }
        let Some(s) = self.streaming else { return Ok(()) };
        ivf.streaming_sample_rate = Some(s.sample_rate);
        ivf.streaming_coreset_rate = s.coreset_rate;
        ivf.streaming_refine_passes = s.refine_passes;
        let partitions = match ivf.num_partitions {
            Some(n) => n,
            None => self.num_partitions(index_type, rows)? as usize,
        };
        let per_partition = usize::try_from(rows).unwrap_or(usize::MAX) / partitions.max(1);
        if per_partition < ivf.sample_rate {
            ivf.sample_rate = (per_partition / s.sample_rate).max(1) * s.sample_rate;
            ivf.streaming_coreset_rate = s.coreset_rate.map(|c| c.min(ivf.sample_rate));
        }
        Ok(())
    }

    /// The same, for the IVF stage of a vector build's parameters.
    pub fn apply(&self, params: &mut VectorIndexParams, index_type: i32, rows: u64) -> CResult<()> {
        for stage in params.stages.iter_mut() {
            if let StageParams::Ivf(ivf) = stage {
                self.apply_ivf(ivf, index_type, rows)?;
            }
        }
        Ok(())
    }

    /// The partition count a build of `index_type` over `rows` rows uses
    /// when none is given: the core's rule (lance-index-14.0.2
    /// src/vector/ivf/builder.rs `recommended_num_partitions`) with this
    /// target or the type's own (lance-index-core `IndexType::target_partition_size`).
    pub fn num_partitions(&self, index_type: i32, rows: u64) -> CResult<u32> {
        let core_type = vector_index_type(index_type, "params->index_type")?;
        let target = self.target_partition_size.unwrap_or_else(|| core_type.target_partition_size());
        let rows = usize::try_from(rows).unwrap_or(usize::MAX);
        Ok(recommended_num_partitions(rows, target) as u32)
    }
}
