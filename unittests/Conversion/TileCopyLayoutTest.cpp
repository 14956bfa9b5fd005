//===- TileCopyLayoutTest.cpp - Which thread copies which chunk -----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// TileCopyLayout is the chunk assignment the GPU kernel generator emits for
// every cp.async of Q, K and V and every store of O; here it runs on integers
// (IntegerArith) and every thread's copies are simulated: each chunk of the
// tile must be copied exactly once, by a thread whose chunk is the same in
// every round, and no thread may copy past the tile's rows or a row's chunks
// (they would write past the tile in shared memory).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToNVGPU/TileCopyLayout.h"

#include "attn/Analysis/IntegerArith.h"

#include "gtest/gtest.h"

#include <vector>

using namespace mlir::attn;

namespace {

IntegerArith arith;

/// How often each (row, chunk) of a rows x chunksPerRow tile is copied when
/// `threads` threads run the layout's rounds; fails on a copy outside it.
std::vector<std::vector<int>> simulate(int64_t rows, int64_t chunksPerRow,
                                       int64_t threads) {
  TileCopyLayout<IntegerArith> copy(arith, rows, chunksPerRow, threads);
  std::vector<std::vector<int>> copies(rows, std::vector<int>(chunksPerRow));
  for (int64_t tid = 0; tid < threads; ++tid) {
    int64_t laneRow = copy.laneRow(tid), chunk = copy.chunk(tid);
    for (int64_t round = 0; round < copy.rounds(); ++round) {
      int64_t row = copy.row(laneRow, round);
      EXPECT_EQ(row, laneRow + round * copy.rowsPerRound());
      EXPECT_EQ(copy.slotRow(tid, round), row);
      EXPECT_EQ(copy.slotChunk(tid, round), chunk);
      if (copy.hasIdleThreads(round) && !copy.copies(chunk, row, round))
        continue;
      EXPECT_LT(row, rows) << "thread " << tid << " round " << round;
      EXPECT_LT(chunk, chunksPerRow) << "thread " << tid << " round " << round;
      if (row < rows && chunk < chunksPerRow)
        ++copies[row][chunk];
    }
  }
  return copies;
}

TEST(TileCopyLayout, EveryChunkOnceForEveryRowWidthAndThreadCount) {
  // Rows of a multiple of 8 16-bit elements up to 256 (the GPU path's head
  // dimensions: 1 to 32 chunks), 1 to 16 warps, tiles of the kernel's
  // heights (query, key/value and per-warp O rows) and odd ones.
  for (int64_t chunksPerRow = 1; chunksPerRow <= 32; ++chunksPerRow)
    for (int64_t threads = 32; threads <= 512; threads *= 2)
      for (int64_t rows : {1, 3, 7, 16, 32, 33, 64, 100, 128}) {
        std::vector<std::vector<int>> copies =
            simulate(rows, chunksPerRow, threads);
        for (int64_t row = 0; row < rows; ++row)
          for (int64_t chunk = 0; chunk < chunksPerRow; ++chunk)
            ASSERT_EQ(copies[row][chunk], 1)
                << "row " << row << " chunk " << chunk << " of a " << rows
                << " x " << chunksPerRow << " tile, " << threads << " threads";
      }
}

TEST(TileCopyLayout, RowsGetAPowerOfTwoOfThreads) {
  // D = 224: 28 chunks a row get 32 threads, 4 rows a round, threads 28-31
  // of each row idle; a 32-row K tile takes 8 rounds.
  TileCopyLayout<IntegerArith> d224(arith, 32, 28, 128);
  EXPECT_EQ(d224.lanesPerRow, 32);
  EXPECT_EQ(d224.rowsPerRound(), 4);
  EXPECT_EQ(d224.rounds(), 8);
  EXPECT_EQ(d224.laneRow(100), 3);
  EXPECT_EQ(d224.chunk(100), 4);
  EXPECT_TRUE(d224.hasIdleThreads(0));
  EXPECT_FALSE(d224.copies(d224.chunk(29), d224.row(0, 0), 0));
  EXPECT_TRUE(d224.copies(d224.chunk(27), d224.row(0, 0), 0));
  // D = 128: 16 chunks divide the threads; no thread is idle until a last
  // round past the rows.
  TileCopyLayout<IntegerArith> d128(arith, 40, 16, 128);
  EXPECT_EQ(d128.rowsPerRound(), 8);
  EXPECT_EQ(d128.rounds(), 5);
  EXPECT_FALSE(d128.hasIdleThreads(3));
  EXPECT_FALSE(d128.hasIdleThreads(4));
  TileCopyLayout<IntegerArith> d128Odd(arith, 36, 16, 128);
  EXPECT_TRUE(d128Odd.hasIdleThreads(4));
  EXPECT_FALSE(d128Odd.copies(0, d128Odd.row(4, 4), 4));
  EXPECT_TRUE(d128Odd.copies(0, d128Odd.row(3, 4), 4));
}

} // namespace
