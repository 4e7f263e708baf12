package org.lancec.segments;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * What the test classes that run the tool share: the tool's path checked before their first test
 * (missing is a set-up failure, never a skip) and one Arrow allocator for the class's datasets,
 * closed after its last test.
 */
abstract class ToolTest {
  static BufferAllocator allocator;

  @BeforeAll
  static void openAllocator() {
    Tool.path();
    allocator = new RootAllocator();
  }

  @AfterAll
  static void closeAllocator() {
    allocator.close();
  }
}
