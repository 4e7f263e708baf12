package org.lancec.segments;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The portable serialization of Roaring bitmaps (32-bit values), in which the
 * manifest keeps a segment's fragment coverage ({@code fragment_bitmap}).
 */
public final class RoaringBitmaps {
  private static final int COOKIE_NO_RUNS = 12346;
  private static final int COOKIE = 12347;

  private RoaringBitmaps() {}

  /** The sorted values of a serialized bitmap; empty bytes are the empty set. */
  public static List<Integer> decode(byte[] data) {
    List<Integer> values = new ArrayList<>();
    if (data.length == 0) return values;
    try {
      ByteBuffer in = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
      int cookie = in.getInt();
      int count;
      boolean[] run;
      boolean offsets;
      if ((cookie & 0xffff) == COOKIE) {
        count = (cookie >>> 16) + 1;
        byte[] runBits = new byte[(count + 7) / 8];
        in.get(runBits);
        run = new boolean[count];
        for (int i = 0; i < count; i++) run[i] = ((runBits[i / 8] >> (i % 8)) & 1) != 0;
        offsets = count >= 4;
      } else if (cookie == COOKIE_NO_RUNS) {
        count = in.getInt();
        if (count < 0 || count > 65536) throw new SegmentMetadataException("malformed fragment bitmap: " + count + " containers");
        run = new boolean[count];
        offsets = true;
      } else {
        throw new SegmentMetadataException("malformed fragment bitmap: not a portable Roaring bitmap (cookie " + cookie + ")");
      }
      int[] keys = new int[count];
      int[] cards = new int[count];
      for (int i = 0; i < count; i++) {
        keys[i] = in.getShort() & 0xffff;
        cards[i] = (in.getShort() & 0xffff) + 1;
      }
      if (offsets) in.position(in.position() + 4 * count);
      for (int c = 0; c < count; c++) {
        long high = (long) keys[c] << 16;
        if (run[c]) {
          int runs = in.getShort() & 0xffff;
          for (int r = 0; r < runs; r++) {
            int start = in.getShort() & 0xffff;
            int length = in.getShort() & 0xffff;
            for (int v = start; v <= start + length; v++) values.add((int) (high | v));
          }
        } else if (cards[c] <= 4096) {
          for (int i = 0; i < cards[c]; i++) values.add((int) (high | (in.getShort() & 0xffff)));
        } else {
          for (int w = 0; w < 1024; w++) {
            long word = in.getLong();
            while (word != 0) {
              int bit = Long.numberOfTrailingZeros(word);
              values.add((int) (high | (w * 64L + bit)));
              word &= word - 1;
            }
          }
        }
      }
    } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
      if (e instanceof SegmentMetadataException) throw e;
      throw new SegmentMetadataException("malformed fragment bitmap: truncated");
    }
    return values;
  }

  /** The portable serialization of non-negative values, run containers where the core would use them. */
  public static byte[] encode(List<Integer> values) {
    TreeSet<Long> sorted = new TreeSet<>();
    for (Integer v : values) {
      if (v == null || v < 0) throw new SegmentMetadataException("fragment id " + v + " is not a non-negative integer");
      sorted.add((long) v);
    }
    List<Integer> keys = new ArrayList<>();
    List<List<Integer>> lows = new ArrayList<>();
    for (long v : sorted) {
      int key = (int) (v >>> 16);
      if (keys.isEmpty() || keys.get(keys.size() - 1) != key) {
        keys.add(key);
        lows.add(new ArrayList<>());
      }
      lows.get(lows.size() - 1).add((int) (v & 0xffff));
    }
    // Each container as the Lance core writes it: a run container when that
    // is strictly smaller than its array or bitmap form (the core optimizes a
    // bitmap before serializing it), so the library's bytes encode back the same.
    int n = keys.size();
    List<List<int[]>> runs = new ArrayList<>();
    boolean[] isRun = new boolean[n];
    boolean anyRun = false;
    int[] chunk = new int[n];
    for (int i = 0; i < n; i++) {
      List<int[]> r = new ArrayList<>();
      for (int low : lows.get(i)) {
        if (!r.isEmpty() && r.get(r.size() - 1)[1] + 1 == low) {
          r.get(r.size() - 1)[1] = low;
        } else {
          r.add(new int[] {low, low});
        }
      }
      runs.add(r);
      int plain = lows.get(i).size() <= 4096 ? 2 * lows.get(i).size() : 8192;
      isRun[i] = plain > 2 + 4 * r.size();
      anyRun |= isRun[i];
      chunk[i] = isRun[i] ? 2 + 4 * r.size() : plain;
    }
    boolean withOffsets = !anyRun || n >= 4;
    int flagBytes = anyRun ? (n + 7) / 8 : 0;
    int header = anyRun ? 4 + flagBytes + 4 * n + (withOffsets ? 4 * n : 0) : 8 + 8 * n;
    int size = header;
    for (int c : chunk) size += c;
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    if (anyRun) {
      out.putInt(COOKIE | ((n - 1) << 16));
      byte[] flags = new byte[flagBytes];
      for (int i = 0; i < n; i++) if (isRun[i]) flags[i / 8] |= (byte) (1 << (i % 8));
      out.put(flags);
    } else {
      out.putInt(COOKIE_NO_RUNS).putInt(n);
    }
    for (int i = 0; i < n; i++) out.putShort((short) (int) keys.get(i)).putShort((short) (lows.get(i).size() - 1));
    if (withOffsets) {
      int offset = header;
      for (int c : chunk) {
        out.putInt(offset);
        offset += c;
      }
    }
    for (int i = 0; i < n; i++) {
      List<Integer> l = lows.get(i);
      if (isRun[i]) {
        out.putShort((short) runs.get(i).size());
        for (int[] r : runs.get(i)) out.putShort((short) r[0]).putShort((short) (r[1] - r[0]));
      } else if (l.size() <= 4096) {
        for (int low : l) out.putShort((short) low);
      } else {
        long[] words = new long[1024];
        for (int low : l) words[low / 64] |= 1L << (low % 64);
        for (long w : words) out.putLong(w);
      }
    }
    return out.array();
  }
}
