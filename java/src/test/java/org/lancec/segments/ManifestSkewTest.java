package org.lancec.segments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.ReadOptions;

/**
 * The version skew's hard edge: a manifest Lance 14.0.2 writes that the Java SDK 7.0.0 refuses.
 *
 * <p>Lance 14.0.2 sets the manifest feature flag "mixed data file versions" (1 << 8 = 256, in both
 * the reader and the writer flags; lance-table 14.0.2 src/feature_flags.rs) when the fragments'
 * data files have different format versions, as after an append with an explicit
 * `data_storage_version` other than the dataset's. 7.0.0 knows flags below 64 only and refuses
 * the dataset on open, with the message below. The version written before the append opens.
 */
class ManifestSkewTest extends ToolTest {
  /** 7.0.0's refusal, exactly as its JNI layer passes it on (a line break and the Rust location included). */
  static final String REFUSAL = "Not supported: This dataset cannot be read by this version of Lance. Please upgrade"
      + " Lance to read this dataset.\n Flags: 256, /workspace/rust/lance/src/dataset.rs:647:24";

  @BeforeAll
  static void needsPylance() {
    Pylance.python();
  }

  @Test
  void mixedDataFileVersionsWrittenByLance14AreRefusedBySdk7WithItsMessage(@TempDir Path dir) throws Exception {
    String uri = dir.resolve("mixed.lance").toString();
    // pylance 14.0.2 writes 3 rows in format 2.0, then appends 3 rows in format 2.1.
    assertEquals("rows 6\n0 2.0\n1 2.1\n", Pylance.run("mixed", uri));
    // lance-c (Lance 14.0.2) reads it: both fragments, to plan over.
    String plan = Tool.run("plan", uri, "--groups", "1");
    assertEquals(1, Tool.plan(uri, 1).size(), plan);
    assertEquals(java.util.List.of(0, 1), Tool.plan(uri, 1).get(0), plan);

    UnsupportedOperationException e =
        assertThrows(UnsupportedOperationException.class, () -> Dataset.open(uri, allocator).close());
    assertEquals(REFUSAL, e.getMessage());

    // The version before the append (one format) has no such flag: 7.0.0 opens it.
    try (Dataset v1 = Dataset.open(allocator, uri, new ReadOptions.Builder().setVersion(1).build())) {
      assertEquals(1, v1.version());
      assertEquals(3, v1.countRows());
    }
  }
}
