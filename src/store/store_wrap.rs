//! What the library's object-store wrappers (store/data_cache.rs,
//! store/store_gate.rs) share: the `ObjectStore` methods they hand to the
//! store they wrap unchanged.

/// Inside an `impl ObjectStore` for a wrapper with an `inner:
/// Arc<dyn ObjectStore>` field: the listings and deletes that return
/// streams, handed to `inner` unchanged.  (`list_with_delimiter` is async:
/// it stays in the impl, which `async_trait` rewrites before this expands.)
macro_rules! pass_streams_through {
    () => {
        fn delete_stream(
            &self,
            locations: futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>> {
            self.inner.delete_stream(locations)
        }

        fn list(
            &self,
            prefix: Option<&object_store::path::Path>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
            self.inner.list(prefix)
        }

        fn list_with_offset(
            &self,
            prefix: Option<&object_store::path::Path>,
            offset: &object_store::path::Path,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
            self.inner.list_with_offset(prefix, offset)
        }
    };
}

pub(crate) use pass_streams_through;
