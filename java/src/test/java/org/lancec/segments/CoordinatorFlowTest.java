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
class CoordinatorFlowTest extends ToolTest {
  static final int ROWS_PER_FRAGMENT = 1000;
  static final int FRAGMENTS = 6;
  static final int DIM = 16;
  static final int PARTITIONS = 8;
  static final int SUB_VECTORS = 4;
  static final int GROUPS = 3;

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

  /**
   * The same search with a k large enough to hold every row tied with the 10th distance:
   * k grows until a row beyond that distance is returned, or fewer rows than k are.
   */
  static List<String> wideSearch(String uri, float[] query) throws Exception {
    for (int k = 64; ; k *= 4) {
      List<String> wide = Tool.searchLines(uri, query, k, PARTITIONS);
      if (wide.size() < k || tiedEnd(wide, 10) < wide.size()) return wide;
    }
  }

  /** The index after the last row of `wide` whose distance equals the k-th's. */
  static int tiedEnd(List<String> wide, int k) {
    String kth = wide.get(k - 1).split("\t")[1];
    int end = k;
    while (end < wide.size() && wide.get(end).split("\t")[1].equals(kth)) end++;
    return end;
  }

  static List<String> distances(List<String> lines) {
    List<String> out = new ArrayList<>();
    for (String line : lines) out.add(line.split("\t")[1]);
    return out;
  }

  static Set<Long> ids(long[] ids) {
    Set<Long> out = new HashSet<>();
    for (long id : ids) out.add(id);
    return out;
  }

  /**
   * The rows a top-k answer may hold whatever the order among equal distances: every row of
   * `wide` (wideSearch's answer, nearest first) whose distance is at most the k-th.
   */
  static Set<Long> tieClosed(List<String> wide, int k) {
    return ids(Tool.ids(wide.subList(0, tiedEnd(wide, k))));
  }

  /**
   * Recall@k that does not depend on the order among rows tied with the k-th distance: the
   * true neighbours among the rows strictly nearer than the k-th distance, plus as many of
   * the true neighbours tied with it as there are places left for the tied rows.
   */
  static double tieAwareRecall(List<String> wide, int k, long[] truth) {
    String kth = wide.get(k - 1).split("\t")[1];
    Set<Long> t = ids(truth);
    int before = 0;
    int hitsBefore = 0;
    int hitsTied = 0;
    Set<Long> closed = tieClosed(wide, k);
    for (String line : wide.subList(0, closed.size())) {
      long id = Long.parseLong(line.split("\t")[0]);
      boolean tied = line.split("\t")[1].equals(kth);
      if (!tied) {
        before++;
        if (t.contains(id)) hitsBefore++;
      } else if (t.contains(id)) {
        hitsTied++;
      }
    }
    return (hitsBefore + Math.min(k - before, hitsTied)) / (double) truth.length;
  }

  /** tieAwareRecall of a top-k answer `lines`, given the rows within its k-th distance. */
  static double tieAwareRecallOf(List<String> lines, Set<Long> closed, long[] truth) {
    String kth = lines.get(lines.size() - 1).split("\t")[1];
    Set<Long> t = ids(truth);
    int before = 0;
    int hitsBefore = 0;
    for (String line : lines) {
      if (line.split("\t")[1].equals(kth)) continue;
      before++;
      if (t.contains(Long.parseLong(line.split("\t")[0]))) hitsBefore++;
    }
    // The tied rows are those of `closed` not strictly nearer.
    Set<Long> strictly = new HashSet<>();
    for (String line : lines) if (!line.split("\t")[1].equals(kth)) strictly.add(Long.parseLong(line.split("\t")[0]));
    int hitsTied = 0;
    for (long id : closed) if (!strictly.contains(id) && t.contains(id)) hitsTied++;
    return (hitsBefore + Math.min(lines.size() - before, hitsTied)) / (double) truth.length;
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

    List<float[]> queries = new ArrayList<>();
    for (int q = 0; q < 12; q++) {
      // Half of the queries are rows; the others lie between two rows, often of two
      // clusters, whose neighbours then fall in more than one partition.
      float[] query = v.row(q * 499 + 7);
      if (q % 2 == 1) {
        float[] other = v.row((q * 733 + 11) % v.rows);
        for (int d = 0; d < DIM; d++) query[d] = (query[d] + other[d]) / 2;
      }
      queries.add(query);
    }
    // pylance 14.0.2 reads the same manifest (written by the Java SDK) and index.
    List<List<String>> pylanceAll = Pylance.searchLines(uri, queries, 10, PARTITIONS);
    List<List<String>> pylanceOne = Pylance.searchLines(uri, queries, 10, 1);
    int mismatchesOneProbe = 0;
    for (int q = 0; q < queries.size(); q++) {
      float[] query = queries.get(q);
      long[] truth = Vectors.bruteForce(List.of(v), query, 10);
      assertArrayEquals(truth, Tool.search(uri, query, 10, PARTITIONS), "query " + q + ", all partitions probed");
      assertArrayEquals(truth, Tool.ids(pylanceAll.get(q)), "query " + q + ", all partitions probed, through pylance");
      long[] oneProbe = Tool.search(uri, query, 10, 1);
      if (!java.util.Arrays.equals(truth, oneProbe)) mismatchesOneProbe++;
      // One probe through pylance: the same partition, so the same rows as through lance-c.
      assertArrayEquals(oneProbe, Tool.ids(pylanceOne.get(q)), "query " + q + ", one probe, pylance vs lance-c");
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
    double tieAwareDistributed = 0;
    double tieAwareSingle = 0;
    int queries = 30;
    int sameIds = 0;
    int samePylanceIds = 0;
    int maxTied = 0;
    List<float[]> qs = new ArrayList<>();
    for (int q = 0; q < queries; q++) qs.add(v.row(q * 197 + 3));
    List<List<String>> pylance = Pylance.searchLines(uri, qs, 10, PARTITIONS);
    for (int q = 0; q < queries; q++) {
      float[] query = qs.get(q);
      long[] truth = Vectors.bruteForce(List.of(v), query, 10);
      List<String> aLines = Tool.searchLines(uri, query, 10, PARTITIONS);
      List<String> bLines = Tool.searchLines(oneShot, query, 10, PARTITIONS);
      long[] a = Tool.ids(aLines);
      long[] b = Tool.ids(bLines);
      distributed += recall(a, truth);
      single += recall(b, truth);
      own += recall(Tool.search(lanceModel, query, 10, PARTITIONS), truth);
      if (java.util.Arrays.equals(a, b)) sameIds++;
      // Same model: every vector has the same partition and the same PQ code in both
      // builds, so the k nearest PQ distances are the same; ids may differ only in the
      // order among equal distances.
      assertEquals(Tool.distances(oneShot, query, 10, PARTITIONS), Tool.distances(uri, query, 10, PARTITIONS),
          "query " + q + ": the PQ distances of the distributed build equal the one-shot build's");
      assertEquals(distances(bLines), distances(aLines), "query " + q + ": the 10 PQ distances, distributed vs one-shot");
      // Why plain id recall may differ: PQ maps many vectors to the same code, so several rows
      // often share the 10th PQ distance, and which of them fill the last places is the order
      // in which the search met them (one segment or three), not the model. So the rows
      // allowed in a top 10 are those at most the 10th distance (found with a wider k): the
      // same set for both builds, each build's answer drawn from it; and recall counting the
      // tied places as well as they can go (a tie-aware recall, a function of the PQ
      // distances alone) is exactly equal.
      List<String> wideA = wideSearch(uri, query);
      List<String> wideB = wideSearch(oneShot, query);
      assertEquals(distances(wideB), distances(wideA), "query " + q + ": the PQ distances of the wider search");
      maxTied = Math.max(maxTied, tiedEnd(wideA, 10));
      Set<Long> closedA = tieClosed(wideA, 10);
      Set<Long> closedB = tieClosed(wideB, 10);
      assertEquals(closedB, closedA, "query " + q + ": the rows within the 10th PQ distance, distributed vs one-shot");
      assertTrue(closedA.containsAll(ids(a)), "query " + q + ": distributed answer within the 10th distance");
      assertTrue(closedB.containsAll(ids(b)), "query " + q + ": one-shot answer within the 10th distance");
      double ta = tieAwareRecall(wideA, 10, truth);
      double tb = tieAwareRecall(wideB, 10, truth);
      assertEquals(tb, ta, 0.0, "query " + q + ": tie-aware recall@10, distributed vs one-shot");
      tieAwareDistributed += ta;
      tieAwareSingle += tb;
      // pylance 14.0.2 on the index Java committed: the same PQ distances as lance-c, its
      // rows within the 10th distance.
      List<String> p = pylance.get(q);
      assertEquals(distances(aLines), distances(p), "query " + q + ": the 10 PQ distances, pylance vs lance-c");
      assertTrue(closedA.containsAll(ids(Tool.ids(p))), "query " + q + ": pylance's answer within the 10th distance");
      assertEquals(ta, tieAwareRecallOf(p, closedA, truth), 0.0, "query " + q + ": tie-aware recall@10, pylance vs lance-c");
      if (java.util.Arrays.equals(a, Tool.ids(p))) samePylanceIds++;
    }
    distributed /= queries;
    single /= queries;
    own /= queries;
    tieAwareDistributed /= queries;
    tieAwareSingle /= queries;
    System.out.printf("IVF_PQ recall@10 (%d queries, all %d partitions probed): distributed build with the Java"
        + " model %.3f, one-shot build with the Java model %.3f (same ids in %d of %d), Lance 14.0.2 one-shot"
        + " with its own model %.3f; tie-aware: distributed %.3f, one-shot %.3f; pylance's ids equal lance-c's"
        + " in %d of %d; at most %d rows within the 10th PQ distance%n", queries, PARTITIONS, distributed, single,
        sameIds, queries, own, tieAwareDistributed, tieAwareSingle, samePylanceIds, queries, maxTied);
    assertEquals(tieAwareSingle, tieAwareDistributed, 0.0, "tie-aware recall@10, distributed vs one-shot");
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
    assertSearchExact(uri, List.of(v), kept, v, 601, 13, "after deletions");
    appended.write(allocator, uri, ROWS_PER_FRAGMENT, WriteParams.WriteMode.APPEND, true).close();
    String coverage = Tool.run("coverage", uri, "--name", "vec_idx", "--json").replace(" ", "");
    assertTrue(coverage.contains("\"indexed_fragments\":[0,1,2,3]"), coverage);
    assertTrue(coverage.contains("\"unindexed_fragments\":[4]"), coverage);
    assertTrue(coverage.contains("\"unindexed_rows\":1000"), coverage);
    assertSearchExact(uri, List.of(v, appended), kept, appended, 151, 2, "after the append (fragment 4 unindexed)");
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
    assertSearchExact(uri, List.of(v, appended), kept, appended, 151, 2, "with fragment 4 indexed");
  }

  /**
   * Six k-NN queries, the rows q * step + first of `from`, through lance-c with every partition
   * probed: each gives exactly the brute-force top 10 over the rows of `parts` that `kept` accepts.
   */
  static void assertSearchExact(String uri, List<Vectors> parts, java.util.function.LongPredicate kept, Vectors from,
      int step, int first, String when) throws Exception {
    for (int q = 0; q < 6; q++) {
      float[] query = from.row(q * step + first);
      assertArrayEquals(Vectors.bruteForce(parts, query, 10, kept), Tool.search(uri, query, 10, PARTITIONS),
          "query " + q + " " + when);
    }
  }
}
