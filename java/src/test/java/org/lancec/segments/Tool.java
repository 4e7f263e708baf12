package org.lancec.segments;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** lance-c's lance-index tool (built by CMake; its path comes from ctest), run as separate processes. */
final class Tool {
  private Tool() {}

  /** The tool's path. Missing is a set-up failure, never a skip. */
  static String path() {
    String p = System.getProperty("lance.index.tool", "");
    if (p.isEmpty() || !Files.isExecutable(Path.of(p))) {
      throw new IllegalStateException(
          "-Dlance.index.tool=<path of the built lance-index> is required (ctest passes it); got '" + p + "'");
    }
    return p;
  }

  static Process start(List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(path());
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(false);
    pb.environment().put("RUST_LOG", "error");
    return pb.start();
  }

  /** Output of a finished process; fails with its stderr unless it exited with `expected`. */
  static String finish(Process p, List<String> args, int expected) throws Exception {
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    if (!p.waitFor(600, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("lance-index " + args + " did not finish");
    }
    if (p.exitValue() != expected) {
      throw new AssertionError(
          "lance-index " + args + " exited with " + p.exitValue() + " (expected " + expected + "): "
              + new String(err, StandardCharsets.UTF_8));
    }
    return new String(out, StandardCharsets.UTF_8);
  }

  static String run(String... args) throws Exception {
    List<String> a = Arrays.asList(args);
    return finish(start(a), a, 0);
  }

  /** The fragment groups of `lance-index plan URI --groups N`. */
  static List<List<Integer>> plan(String uri, int groups) throws Exception {
    String json = run("plan", uri, "--groups", Integer.toString(groups));
    List<List<Integer>> out = new ArrayList<>();
    Matcher m = Pattern.compile("\"fragments\": \\[([0-9, ]*)\\]").matcher(json);
    while (m.find()) {
      List<Integer> ids = new ArrayList<>();
      for (String s : m.group(1).split(",")) if (!s.isBlank()) ids.add(Integer.parseInt(s.trim()));
      out.add(ids);
    }
    return out;
  }

  /** The ids `lance-index search` returns, nearest first. */
  static long[] search(String uri, float[] query, int k, int nprobes) throws Exception {
    return ids(searchLines(uri, query, k, nprobes));
  }

  /** The distances (as the tool prints them) `lance-index search` returns, nearest first. */
  static List<String> distances(String uri, float[] query, int k, int nprobes) throws Exception {
    List<String> out = new ArrayList<>();
    for (String line : searchLines(uri, query, k, nprobes)) out.add(line.split("\t")[1]);
    return out;
  }

  /** The ids of "id\tdistance" lines. */
  static long[] ids(List<String> lines) {
    long[] ids = new long[lines.size()];
    for (int i = 0; i < ids.length; i++) ids[i] = Long.parseLong(lines.get(i).split("\t")[0]);
    return ids;
  }

  /** A query vector as the tool's --query text. */
  static String queryText(float[] query) {
    StringBuilder q = new StringBuilder();
    for (int i = 0; i < query.length; i++) q.append(i == 0 ? "" : ",").append(Float.toString(query[i]));
    return q.toString();
  }

  /** `lance-index search` output: "id\tdistance" lines (distance as printf "%g"), nearest first. */
  static List<String> searchLines(String uri, float[] query, int k, int nprobes) throws Exception {
    String out =
        run("search", uri, "--column", "vec", "--query", queryText(query), "--k", Integer.toString(k), "--nprobes",
            Integer.toString(nprobes));
    String[] lines = out.strip().split("\n");
    if (!lines[0].equals("id\t_distance")) throw new AssertionError("unexpected search output: " + out);
    return Arrays.asList(lines).subList(1, lines.length);
  }

  static String join(List<Integer> ids) {
    StringBuilder s = new StringBuilder();
    for (int id : ids) s.append(s.length() == 0 ? "" : ",").append(id);
    return s.toString();
  }

  /** Writes float[] as raw little-endian float32: the tool's --ivf-centroids / --pq-codebook layout. */
  static Path writeF32(Path file, float[] values) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : values) b.putFloat(v);
    return Files.write(file, b.array());
  }
}
