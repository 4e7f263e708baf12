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

  /** The portable serialization (no run containers) of non-negative values. */
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
    int n = keys.size();
    int size = 8 + 8 * n;
    for (List<Integer> l : lows) size += l.size() <= 4096 ? 2 * l.size() : 8192;
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(COOKIE_NO_RUNS).putInt(n);
    for (int i = 0; i < n; i++) out.putShort((short) (int) keys.get(i)).putShort((short) (lows.get(i).size() - 1));
    int offset = 8 + 8 * n;
    for (List<Integer> l : lows) {
      out.putInt(offset);
      offset += l.size() <= 4096 ? 2 * l.size() : 8192;
    }
    for (List<Integer> l : lows) {
      if (l.size() <= 4096) {
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
