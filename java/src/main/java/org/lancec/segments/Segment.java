package org.lancec.segments;

import java.util.List;
import org.lance.index.Index;

/**
 * A decoded segment: the SDK's {@link Index} and the segment's file list,
 * which {@code Index} of the Lance Java SDK 7.0.0 cannot hold.
 *
 * <p>The file list is kept here rather than dropped: {@link SegmentCodec#encode(Segment)}
 * writes it back, so bytes from lance-c survive a round trip unchanged. A commit
 * through the SDK ({@code Dataset.commitExistingIndexSegments}) cannot pass the
 * file list on; lance-c reads and queries such an index all the same (the list
 * is optional in the manifest).
 */
public record Segment(Index index, List<IndexFile> files) {
  public Segment {
    files = List.copyOf(files);
  }
}
