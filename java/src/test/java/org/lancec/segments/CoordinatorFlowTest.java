package org.lancec.segments;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.index.DistanceType;
import org.lance.index.Index;
import org.lance.index.IndexType;
import org.lance.index.vector.IvfBuildParams;
import org.lance.index.vector.PQBuildParams;
import org.lance.index.vector.VectorTrainer;

/**
 * The downstream flow: a Java coordinator (Lance Java SDK 7.0.0) trains the
 * model, lance-c workers (the lance-index tool, Lance 14.0.2, one process per
 * planned fragment group) build the segments, Java commits them, and k-NN
 * runs through lance-c.
 */
class CoordinatorFlowTest {
  static final int ROWS_PER_FRAGMENT = 1000;
  static final int FRAGMENTS = 6;
  static final int DIM = 16;
  static final int PARTITIONS = 8;
  static final int SUB_VECTORS = 4;
  static final int GROUPS = 3;

  static BufferAllocator allocator;

  @BeforeAll
  static void setUp() {
    Tool.path();
    allocator = new RootAllocator();
  }

  @AfterAll
  static void tearDown() {
    allocator.close();
  }

  static Vectors data() {
    return new Vectors(ROWS_PER_FRAGMENT * FRAGMENTS, DIM, 0, 42);
  }

  /** The centroids (and codebook, for IVF_PQ) Java trains, written as the tool's raw files. */
  static List<String> trainModel(Dataset ds, Path dir, boolean pq) throws Exception {
    List<String> args = trainModelFor(ds, dir, PARTITIONS, SUB_VECTORS);
    return pq ? args : args.subList(0, 4);
  }

  /** Lance-index arguments for a Java-trained model: centroids [0..3], then the PQ codebook [4..7]. */
  static List<String> trainModelFor(Dataset ds, Path dir, int partitions, int subVectors) throws Exception {
    IvfBuildParams ivf = new IvfBuildParams.Builder().setNumPartitions(partitions).setMaxIters(20).build();
    float[] centroids = VectorTrainer.trainIvfCentroids(ds, "vec", ivf, DistanceType.L2);
    assertEquals(partitions * DIM, centroids.length, "row-major [K][dim]");
    PQBuildParams pqParams = new PQBuildParams.Builder().setNumSubVectors(subVectors).setNumBits(8).build();
    float[] codebook = VectorTrainer.trainPqCodebook(ds, "vec", pqParams, DistanceType.L2);
    assertEquals(256 * DIM, codebook.length, "[sub][256][dim/sub]");
    return List.of(
        "--ivf-centroids", Tool.writeF32(dir.resolve("centroids.f32"), centroids).toString(),
        "--partitions", Integer.toString(partitions),
        "--pq-codebook", Tool.writeF32(dir.resolve("codebook.f32"), codebook).toString(),
        "--sub-vectors", Integer.toString(subVectors));
  }

  /** One lance-index build process per group, all running at once; their segment files. */
  static List<Path> buildSegments(String uri, long version, List<List<Integer>> groups, List<String> model,
      String type, Path dir) throws Exception {
    List<Process> running = new ArrayList<>();
    List<List<String>> commands = new ArrayList<>();
    List<Path> out = new ArrayList<>();
    for (int g = 0; g < groups.size(); g++) {
      Path seg = dir.resolve(type + "-" + g + ".seg");
      List<String> args = new ArrayList<>(List.of(
          "build", uri, "--column", "vec", "--type", type, "--fragments", Tool.join(groups.get(g)),
          "--version", Long.toString(version), "--uuid", UUID.randomUUID().toString(), "--quiet", "-o",
          seg.toString()));
      args.addAll(model);
      commands.add(args);
      running.add(Tool.start(args));
      out.add(seg);
    }
    for (int g = 0; g < running.size(); g++) Tool.finish(running.get(g), commands.get(g), 0);
    return out;
  }

  static List<Index> decodeAll(List<Path> segments) throws Exception {
    List<Index> out = new ArrayList<>();
    for (Path p : segments) out.add(SegmentCodec.decode(Files.readAllBytes(p)).index());
    return out;
  }

  static double recall(long[] got, long[] truth) {
    Set<Long> t = new HashSet<>();
    for (long id : truth) t.add(id);
    int hit = 0;
    for (long id : got) if (t.contains(id)) hit++;
    return hit / (double) truth.length;
  }

  /** Test 1, IVF_FLAT: the exact check. Every partition probed gives the brute-force top 10. */
  @Test
  void ivfFlatJavaModelCWorkersJavaCommitExactKnnThroughLanceC(@TempDir Path dir) throws Exception {
    Vectors v = data();
    String uri = dir.resolve("flat.lance").toString();
    try (Dataset ds = v.write(allocator, uri, ROWS_PER_FRAGMENT, WriteParams.WriteMode.CREATE, false)) {
      assertEquals(FRAGMENTS, ds.getFragments().size());
      List<String> model = trainModel(ds, dir, false);
      List<List<Integer>> groups = Tool.plan(uri, GROUPS);
      assertEquals(GROUPS, groups.size());
      List<Path> segs = buildSegments(uri, ds.version(), groups, model, "IVF_FLAT", dir);
      List<Index> indexes = decodeAll(segs);
      for (int g = 0; g < GROUPS; g++) {
        assertEquals(groups.get(g), indexes.get(g).fragments().get(), "the segment covers its planned group");
        assertEquals(IndexType.VECTOR, indexes.get(g).indexType());
      }
      List<Index> committed = ds.commitExistingIndexSegments("vec_idx", "vec", indexes);
      assertEquals(GROUPS, committed.size());
    }
    // lance-c reads the manifest the Java SDK wrote: three segments, every fragment indexed.
    String listing = Tool.run("list", uri, "--json");
    assertEquals(GROUPS, listing.split("\"IVF_FLAT\"", -1).length - 1, listing);
    String coverage = Tool.run("coverage", uri, "--name", "vec_idx", "--json");
    assertTrue(coverage.replace(" ", "").contains("\"unindexed_fragments\":[]"), coverage);

    int mismatchesOneProbe = 0;
    for (int q = 0; q < 12; q++) {
      // Half of the queries are rows; the others lie between two rows, often of two
      // clusters, whose neighbours then fall in more than one partition.
      float[] query = v.row(q * 499 + 7);
      if (q % 2 == 1) {
        float[] other = v.row((q * 733 + 11) % v.rows);
        for (int d = 0; d < DIM; d++) query[d] = (query[d] + other[d]) / 2;
      }
      long[] truth = Vectors.bruteForce(List.of(v), query, 10);
      assertArrayEquals(truth, Tool.search(uri, query, 10, PARTITIONS), "query " + q + ", all partitions probed");
      if (!java.util.Arrays.equals(truth, Tool.search(uri, query, 10, 1))) mismatchesOneProbe++;
    }
    // The index is what answered: one probe of eight partitions misses neighbours.
    assertTrue(mismatchesOneProbe > 0, "nprobes 1 gave the exact answer every time: is the index used?");
  }

  /**
   * Test 1, IVF_PQ: the same flow with a Java-trained codebook; recall@10 against a
   * one-shot build with the same Java-trained model, and against Lance 14.0.2's own
   * one-shot build (its own model) for scale.
   */
  @Test
  void ivfPqJavaModelCWorkersJavaCommitRecallOfOneShot(@TempDir Path dir) throws Exception {
    Vectors v = data();
    String uri = dir.resolve("pq.lance").toString();
    String oneShot = dir.resolve("pq-one-shot.lance").toString();
    String lanceModel = dir.resolve("pq-lance-model.lance").toString();
    List<String> model;
    try (Dataset ds = v.write(allocator, uri, ROWS_PER_FRAGMENT, WriteParams.WriteMode.CREATE, false)) {
      model = trainModel(ds, dir, true);
      List<List<Integer>> groups = Tool.plan(uri, GROUPS);
      List<Path> segs = buildSegments(uri, ds.version(), groups, model, "IVF_PQ", dir);
      ds.commitExistingIndexSegments("vec_idx", "vec", decodeAll(segs));
    }
    // The one-shot build with the same model: one segment over every fragment.
    try (Dataset ds = v.write(allocator, oneShot, ROWS_PER_FRAGMENT, WriteParams.WriteMode.CREATE, false)) {
      List<Integer> all = new ArrayList<>();
      ds.getFragments().forEach(f -> all.add(f.getId()));
      Path one = Files.createDirectories(dir.resolve("one"));
      List<Path> segs = buildSegments(oneShot, ds.version(), List.of(all), model, "IVF_PQ", one);
      ds.commitExistingIndexSegments("vec_idx", "vec", decodeAll(segs));
    }
    // Lance 14.0.2's one-shot build, training its own model.
    v.write(allocator, lanceModel, ROWS_PER_FRAGMENT, WriteParams.WriteMode.CREATE, false).close();
    Tool.run("create", lanceModel, "--column", "vec", "--type", "IVF_PQ", "--partitions", Integer.toString(PARTITIONS),
        "--sub-vectors", Integer.toString(SUB_VECTORS), "--quiet");

    double distributed = 0;
    double single = 0;
    double own = 0;
    int queries = 30;
    int sameIds = 0;
    for (int q = 0; q < queries; q++) {
      float[] query = v.row(q * 197 + 3);
      long[] truth = Vectors.bruteForce(List.of(v), query, 10);
      long[] a = Tool.search(uri, query, 10, PARTITIONS);
      long[] b = Tool.search(oneShot, query, 10, PARTITIONS);
      distributed += recall(a, truth);
      single += recall(b, truth);
      own += recall(Tool.search(lanceModel, query, 10, PARTITIONS), truth);
      if (java.util.Arrays.equals(a, b)) sameIds++;
      // Same model: every vector has the same partition and the same PQ code in both
      // builds, so the k nearest PQ distances are the same; ids may differ only in the
      // order among equal distances.
      assertEquals(Tool.distances(oneShot, query, 10, PARTITIONS), Tool.distances(uri, query, 10, PARTITIONS),
          "query " + q + ": the PQ distances of the distributed build equal the one-shot build's");
    }
    distributed /= queries;
    single /= queries;
    own /= queries;
    System.out.printf("IVF_PQ recall@10 (%d queries, all %d partitions probed): distributed build with the Java"
        + " model %.3f, one-shot build with the Java model %.3f (same ids in %d of %d), Lance 14.0.2 one-shot"
        + " with its own model %.3f%n", queries, PARTITIONS, distributed, single, sameIds, queries, own);
    assertEquals(single, distributed, 0.05, "recall@10 of the distributed build vs the one-shot build's");
  }

  /**
   * Stable row ids and deletions before the build, an append after the commit: lance-c's
   * coverage names the appended fragment unindexed, k-NN stays exact, and a segment over
   * it built by a C worker and committed by Java covers it.
   */
  @Test
  void stableRowIdsDeletionsAndAnAppendAfterTheCommit(@TempDir Path dir) throws Exception {
    Vectors v = new Vectors(4000, DIM, 0, 11);
    Vectors appended = new Vectors(1000, DIM, 4000, 12);
    java.util.function.LongPredicate kept = id -> !(id < 50 || id % 97 == 0);
    String uri = dir.resolve("stable.lance").toString();
    List<String> model;
    try (Dataset ds = v.write(allocator, uri, ROWS_PER_FRAGMENT, WriteParams.WriteMode.CREATE, true)) {
      ds.getFragments().forEach(f -> assertTrue(f.metadata().getRowIdMeta() != null, "stable row ids"));
      ds.delete("id < 50 OR id % 97 = 0");
    }
    try (Dataset ds = Dataset.open(uri, allocator)) {
      model = trainModel(ds, dir, false);
      List<List<Integer>> groups = Tool.plan(uri, 2);
      List<Path> segs = buildSegments(uri, ds.version(), groups, model, "IVF_FLAT", dir);
      ds.commitExistingIndexSegments("vec_idx", "vec", decodeAll(segs));
    }
    for (int q = 0; q < 6; q++) {
      float[] query = v.row(q * 601 + 13);
      assertArrayEquals(Vectors.bruteForce(List.of(v), query, 10, kept), Tool.search(uri, query, 10, PARTITIONS),
          "query " + q + " after deletions");
    }
    appended.write(allocator, uri, ROWS_PER_FRAGMENT, WriteParams.WriteMode.APPEND, true).close();
    String coverage = Tool.run("coverage", uri, "--name", "vec_idx", "--json").replace(" ", "");
    assertTrue(coverage.contains("\"indexed_fragments\":[0,1,2,3]"), coverage);
    assertTrue(coverage.contains("\"unindexed_fragments\":[4]"), coverage);
    assertTrue(coverage.contains("\"unindexed_rows\":1000"), coverage);
    for (int q = 0; q < 6; q++) {
      float[] query = appended.row(q * 151 + 2);
      assertArrayEquals(Vectors.bruteForce(List.of(v, appended), query, 10, kept),
          Tool.search(uri, query, 10, PARTITIONS), "query " + q + " after the append (fragment 4 unindexed)");
    }
    // Index the appended fragment: one more C-built segment with the same model, committed by Java.
    try (Dataset ds = Dataset.open(uri, allocator)) {
      List<Path> segs = buildSegments(uri, ds.version(), List.of(List.of(4)), model, "IVF_FLAT",
          Files.createDirectories(dir.resolve("append")));
      ds.commitExistingIndexSegments("vec_idx", "vec", decodeAll(segs));
    }
    coverage = Tool.run("coverage", uri, "--name", "vec_idx", "--json").replace(" ", "");
    assertTrue(coverage.contains("\"indexed_fragments\":[0,1,2,3,4]"), coverage);
    assertTrue(coverage.contains("\"unindexed_fragments\":[]"), coverage);
    assertTrue(coverage.contains("\"num_segments\":3"), coverage);
    for (int q = 0; q < 6; q++) {
      float[] query = appended.row(q * 151 + 2);
      assertArrayEquals(Vectors.bruteForce(List.of(v, appended), query, 10, kept),
          Tool.search(uri, query, 10, PARTITIONS), "query " + q + " with fragment 4 indexed");
    }
  }
}
