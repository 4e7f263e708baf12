package org.lancec.segments;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * pylance 14.0.2 (the Lance release lance-c pins) through src/test/python/java_coordinator_oracle.py,
 * run with the Python ctest names. Missing Python or script is a set-up failure, never a skip.
 */
final class Pylance {
  private Pylance() {}

  static String python() {
    String p = System.getProperty("lance.python", "");
    if (p.isEmpty() || !Files.isExecutable(Path.of(p))) {
      throw new IllegalStateException(
          "-Dlance.python=<the Python with pylance 14.0.2> is required (ctest passes it); got '" + p + "'");
    }
    return p;
  }

  static String oracle() {
    String p = System.getProperty("lance.oracle", "");
    if (p.isEmpty() || !Files.isRegularFile(Path.of(p))) {
      throw new IllegalStateException("-Dlance.oracle=<java/src/test/python/java_coordinator_oracle.py> is required; got '" + p + "'");
    }
    return p;
  }

  /** The script's output; fails with its stderr unless it exits 0. */
  static String run(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(python(), oracle()));
    cmd.addAll(Arrays.asList(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().put("RUST_LOG", "error");
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    if (!p.waitFor(600, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("pylance oracle " + Arrays.toString(args) + " did not finish");
    }
    if (p.exitValue() != 0) {
      throw new AssertionError("pylance oracle " + Arrays.toString(args) + " exited with " + p.exitValue() + ": "
          + new String(err, StandardCharsets.UTF_8));
    }
    return new String(out, StandardCharsets.UTF_8);
  }

  /**
   * pylance's k-NN for each query, probing exactly `nprobes` partitions (one process for all
   * of them): per query, "id\tdistance" lines (distance as printf "%g"), nearest first.
   */
  static List<List<String>> searchLines(String uri, List<float[]> queries, int k, int nprobes) throws Exception {
    List<String> args = new ArrayList<>(List.of("search", uri, "vec", Integer.toString(k), Integer.toString(nprobes)));
    for (float[] q : queries) args.add(Tool.queryText(q));
    String out = run(args.toArray(new String[0]));
    List<List<String>> answers = new ArrayList<>();
    for (String block : out.split("\n\n")) {
      if (block.isBlank()) continue;
      String[] lines = block.strip().split("\n");
      if (!lines[0].equals("id\t_distance")) throw new AssertionError("unexpected pylance search output: " + out);
      answers.add(Arrays.asList(lines).subList(1, lines.length));
    }
    if (answers.size() != queries.size()) {
      throw new AssertionError("pylance answered " + answers.size() + " of " + queries.size() + " queries: " + out);
    }
    return answers;
  }
}
