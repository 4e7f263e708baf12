//! The C surface, one module per section of include/lance/lance.h, in the
//! header's order.

mod errors; //        Version; Errors and memory
mod budget; //        Process budget
mod logging; //       Logging
mod dataset; //       Datasets
mod history; //       Versions, restore and statistics
mod session; //       Sessions
mod write; //         Write
mod merge_insert; //  Merge-insert
mod evolve; //        Schema evolution
mod scan; //          Scan and search
mod scan_async; //    Async scan
mod fts; //           Full-text search
mod take; //          Random access
mod blob; //          Blobs
mod index; //         Indices
mod plan; //          Distributed index builds: planning
mod model; //         Distributed index builds: shared models (E1)
mod training; //      Distributed index builds: distributed training
mod segment; //       Distributed index builds: uncommitted segments (E1)
mod control; //       Build progress and cancellation (E3, E4)
mod metadata; //      Distributed index builds: segment metadata (E2)
mod commit; //        Distributed index builds: commit (E5)
mod listing; //       Distributed index builds: coverage and statistics (E6)
mod optimize; //      Index maintenance
