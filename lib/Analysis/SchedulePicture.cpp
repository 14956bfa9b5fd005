//===- SchedulePicture.cpp - Who computes what, as an SVG picture ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/SchedulePicture.h"

#include "attn/Analysis/DistributedLayout.h"
#include "attn/Analysis/IntegerArith.h"
#include "attn/Analysis/WorkAssignment.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr const char *kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                    "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                    "#9c755f", "#bab0ac", "#1f77b4", "#8c564b"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
/// Output tiles drawn at most, and key/value blocks at most per row.
constexpr int64_t kMaxRows = 64, kMaxCols = 256;
constexpr double kMargin = 40, kTop = 56;

const char *colour(int64_t index) { return kPalette[index % kPaletteSize]; }

/// A minimal SVG writer.
class Svg {
public:
  void rect(double x, double y, double w, double h, StringRef fill,
            StringRef stroke = "none", double strokeWidth = 0,
            double opacity = 1) {
    body << llvm::formatv("<rect x=\"{0:F1}\" y=\"{1:F1}\" width=\"{2:F1}\" "
                          "height=\"{3:F1}\" fill=\"{4}\" stroke=\"{5}\" "
                          "stroke-width=\"{6:F1}\" fill-opacity=\"{7:F2}\"/>\n",
                          x, y, w, h, fill, stroke, strokeWidth, opacity);
  }
  void text(double x, double y, StringRef content, double size = 12,
            StringRef anchor = "start") {
    body << llvm::formatv(
        "<text x=\"{0:F1}\" y=\"{1:F1}\" font-size=\"{2:F0}\" "
        "font-family=\"sans-serif\" text-anchor=\"{3}\">",
        x, y, size, anchor);
    for (char c : content) {
      if (c == '<')
        body << "&lt;";
      else if (c == '>')
        body << "&gt;";
      else if (c == '&')
        body << "&amp;";
      else
        body << c;
    }
    body << "</text>\n";
  }
  void polygon(ArrayRef<std::pair<double, double>> points, StringRef fill,
               double opacity) {
    body << "<polygon points=\"";
    for (auto [x, y] : points)
      body << llvm::formatv("{0:F1},{1:F1} ", x, y);
    body << llvm::formatv("\" fill=\"{0}\" fill-opacity=\"{1:F2}\"/>\n", fill,
                          opacity);
  }
  std::string finish(double width, double height) {
    return llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                         "width=\"{0:F0}\" height=\"{1:F0}\" viewBox=\"0 0 "
                         "{0:F0} {1:F0}\">\n<rect width=\"100%\" "
                         "height=\"100%\" fill=\"white\"/>\n{2}</svg>\n",
                         width, height, text_)
        .str();
  }
  std::string text_;
  llvm::raw_string_ostream body{text_};
};

/// One key/value block of one output tile: who computes it (-1: skipped by
/// the masks), whether it needs the element mask, whether it is the tile's
/// host piece.
struct Cell {
  int64_t owner = -1;
  bool masked = false;
  bool host = false;
  /// Empty in the block mask: visited by the loop, its work skipped.
  bool empty = false;
};

/// Draws `grid` (rows of cells, `labels` per row) under `title` and `what`,
/// with the legend of visited, masked and skipped blocks under a line
/// saying what the rows and columns are.
std::string drawGrid(const std::vector<std::vector<Cell>> &grid,
                     ArrayRef<std::string> labels, StringRef title,
                     StringRef what, StringRef axes, bool numbered,
                     bool blockMaskLegend) {
  int64_t rows = grid.size(), cols = rows ? grid.front().size() : 0;
  double cell = std::clamp(std::min(900.0 / std::max<int64_t>(cols, 1),
                                    640.0 / std::max<int64_t>(rows, 1)),
                           3.0, 28.0);
  double labelWidth = 90;
  Svg svg;
  svg.text(kMargin, 24, title, 15);
  svg.text(kMargin, 42, what, 11);
  double x0 = kMargin + labelWidth, y0 = kTop;
  for (int64_t row = 0; row < rows; ++row) {
    double y = y0 + row * cell;
    if (cell >= 9)
      svg.text(x0 - 6, y + cell * 0.75, labels[row], std::min(cell * 0.8, 11.0),
               "end");
    for (int64_t n = 0; n < cols; ++n) {
      const Cell &c = grid[row][n];
      double x = x0 + n * cell;
      if (c.owner < 0) {
        svg.rect(x, y, cell, cell, "#f2f2f2", "#dddddd", 0.5);
        continue;
      }
      if (c.empty) {
        // The work of its owner, skipped: an outline in the owner's colour.
        svg.rect(x + 1, y + 1, cell - 2, cell - 2, "#fff4e0", colour(c.owner),
                 1.0);
        continue;
      }
      svg.rect(x, y, cell, cell, colour(c.owner), "white", 0.5,
               c.masked ? 0.55 : 1.0);
      if (c.host)
        svg.rect(x + 1, y + 1, cell - 2, cell - 2, "none", "black", 1.5);
      if (numbered && cell >= 16)
        svg.text(x + cell / 2, y + cell * 0.7, std::to_string(c.owner),
                 cell * 0.45, "middle");
    }
  }
  double bottom = y0 + rows * cell + 22;
  svg.text(x0, bottom, axes, 11);
  svg.rect(x0, bottom + 10, 12, 12, colour(0));
  svg.text(x0 + 16, bottom + 20, "visited", 11);
  svg.rect(x0 + 80, bottom + 10, 12, 12, colour(0), "none", 0, 0.55);
  svg.text(x0 + 96, bottom + 20, "visited with the element mask", 11);
  svg.rect(x0 + 280, bottom + 10, 12, 12, "#f2f2f2", "#dddddd", 0.5);
  svg.text(x0 + 296, bottom + 20, "skipped (fully masked)", 11);
  if (blockMaskLegend) {
    svg.rect(x0 + 440, bottom + 11, 10, 10, "#fff4e0", colour(0), 1.0);
    svg.text(x0 + 456, bottom + 20, "skipped (empty in the block mask)", 11);
  }
  return svg.finish(std::max(x0 + cols * cell + kMargin, 1000.0), bottom + 40);
}

/// The block grid of FlashAttention-2, split-KV or Lean: rows are output
/// tiles (Lean: in Lean's order across heads), columns key/value blocks.
std::string drawBlocks(const AttentionProblem &problem, int64_t blockM,
                       int64_t blockN, Attribute partition, StringRef title,
                       const DerivedBlockMask *blockMask) {
  IntegerArith a;
  // With GQA packing, tiles are a tiled head's tiled rows.
  int64_t queryBlocks = problem.queryBlocks(blockM);
  int64_t tiledHeads = problem.tiledHeads();
  int64_t kvBlocks = llvm::divideCeil(problem.keyLen, blockN);
  auto lean = dyn_cast_or_null<LeanAttr>(partition);
  auto split = dyn_cast_or_null<SplitKVAttr>(partition);
  int64_t heads = lean ? problem.batch * tiledHeads : 1;
  int64_t rows = std::min(heads * queryBlocks, kMaxRows);
  int64_t cols = std::min(kvBlocks, kMaxCols);
  // Lean's LeanTiles and CTAs, as every target takes them (LeanWork).
  std::optional<LeanWork<IntegerArith>> work;
  if (lean)
    work.emplace(LeanWork<IntegerArith>::create(
        a, problem.geometry(), blockM, blockN, queryBlocks,
        problem.batch * tiledHeads, lean.getCtas()));

  std::vector<std::vector<Cell>> grid(rows, std::vector<Cell>(cols));
  std::vector<std::string> labels;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t bh = row / queryBlocks, m = row % queryBlocks;
    IndexRange range = problem.kvBlockRange(m, blockM, blockN);
    int64_t first = work ? work->order.tileFirst(work->perHead, bh, m) : 0;
    int64_t hostCta =
        work && range.size() ? work->assignment.ctaOf(first) : 0;
    labels.push_back(lean ? llvm::formatv("b{0} h{1} m{2}", bh / tiledHeads,
                                          bh % tiledHeads, m)
                                .str()
                          : llvm::formatv("m{0}", m).str());
    for (int64_t n = range.begin; n < std::min(range.end, cols); ++n) {
      Cell &cell = grid[row][n];
      cell.masked = !problem.isBlockUnmasked(m, n, blockM, blockN);
      if (blockMask) {
        // Rows are (batch, head) x query block; size-1 dimensions broadcast.
        int64_t b = bh / problem.queryHeads, h = bh % problem.queryHeads;
        ArrayRef<int64_t> shape = blockMask->shape;
        int64_t index = ((std::min(b, shape[0] - 1) * shape[1] +
                          std::min(h, shape[1] - 1)) *
                             shape[2] +
                         m) *
                            shape[3] +
                        n;
        cell.empty = blockMask->values[index] == BlockMaskValue::kEmpty;
      }
      if (split) {
        for (int64_t s = 0; s < split.getSplits(); ++s) {
          auto [begin, end] =
              splitKVPiece(a, range.begin, range.end, s, split.getSplits());
          if (n >= begin && n < end)
            cell.owner = s;
        }
      } else if (work) {
        cell.owner = work->assignment.ctaOf(first + n - range.begin);
        cell.host = cell.owner == hostCta;
      } else {
        cell.owner = 0;
      }
    }
  }

  std::string what =
      split ? llvm::formatv("split-KV: colour = the split (of {0}) computing "
                            "the block; one CTA per (split, query block)",
                            split.getSplits())
                  .str()
      : lean ? llvm::formatv("Lean attention: colour and number = the CTA (of "
                             "{0}) computing the block; thick outline = the "
                             "tile's host",
                             lean.getCtas())
                   .str()
             : std::string("FlashAttention-2: one CTA per row (query block of "
                           "one batch and head)");
  std::string axes = llvm::formatv(
      "columns: key/value blocks of {0} keys ({1} in all{2}); rows: output "
      "tiles of {3} queries{4}",
      blockN, kvBlocks, cols < kvBlocks ? ", first shown" : "", blockM,
      rows < heads * queryBlocks
          ? llvm::formatv(" ({0} of {1} shown)", rows, heads * queryBlocks)
                .str()
          : std::string());
  return drawGrid(grid, labels, title, what, axes, lean || split, blockMask);
}

/// Merges consecutive token runs (the pieces of a chunk) into maximal runs.
SmallVector<std::pair<int64_t, int64_t>>
mergedRuns(SmallVector<TokenRun> runs) {
  llvm::sort(runs, [](const TokenRun &x, const TokenRun &y) {
    return x.globalStart < y.globalStart;
  });
  SmallVector<std::pair<int64_t, int64_t>> merged;
  for (const TokenRun &run : runs) {
    if (!merged.empty() && merged.back().second == run.globalStart)
      merged.back().second += run.length;
    else
      merged.push_back({run.globalStart, run.globalStart + run.length});
  }
  return merged;
}

/// The score matrix of a distributed attention, regions coloured by rank.
std::string drawRanks(const AttentionProblem &problem,
                      const DistributedLayout &layout, StringRef title) {
  double scale = std::min(620.0 / problem.queryLen, 820.0 / problem.keyLen);
  double x0 = kMargin + 30, y0 = kTop + 10;
  Svg svg;
  svg.text(kMargin, 24, title, 15);
  std::string what =
      layout.ring
          ? llvm::formatv("ring attention over {0} ranks{1}: colour = the "
                          "rank computing the scores, number = rank.step",
                          layout.devices(),
                          layout.zigzag ? " (zig-zag shards)" : "")
                .str()
          : llvm::formatv("ATTENTION2D on a {0}x{1} grid{2}: colour and "
                          "label = the rank (row, column) computing the "
                          "scores",
                          layout.rows, layout.cols,
                          layout.zigzag ? " (zig-zag shards)" : "")
                .str();
  svg.text(kMargin, 42, what, 11);
  auto clip = [&](std::pair<int64_t, int64_t> run, int64_t length) {
    return std::make_pair(std::min(run.first, length),
                          std::min(run.second, length));
  };
  auto region = [&](std::pair<int64_t, int64_t> queries,
                    std::pair<int64_t, int64_t> keys, int64_t rank,
                    const std::string &label) {
    queries = clip(queries, problem.queryLen);
    keys = clip(keys, problem.keyLen);
    if (queries.first >= queries.second || keys.first >= keys.second)
      return;
    double x = x0 + keys.first * scale, y = y0 + queries.first * scale;
    double w = (keys.second - keys.first) * scale;
    double h = (queries.second - queries.first) * scale;
    svg.rect(x, y, w, h, colour(rank), "white", 1);
    if (w >= 28 && h >= 14)
      svg.text(x + w / 2, y + h / 2 + 4, label, std::min(12.0, h * 0.6),
               "middle");
  };
  for (int64_t rank = 0; rank < layout.devices(); ++rank) {
    if (layout.ring) {
      for (int64_t step = 0; step < layout.devices(); ++step) {
        int64_t source = (rank - step + layout.devices()) % layout.devices();
        for (auto queries :
             mergedRuns(layout.queryRuns(rank, problem.queryLen)))
          for (auto keys : mergedRuns(layout.keyRuns(source, problem.keyLen)))
            region(queries, keys, rank,
                   llvm::formatv("{0}.{1}", rank, step).str());
      }
      continue;
    }
    int64_t row = rank / layout.cols, col = rank % layout.cols;
    for (auto queries :
         mergedRuns(layout.queryChunkRuns(row, problem.queryLen)))
      for (auto keys : mergedRuns(layout.keyChunkRuns(col, problem.keyLen)))
        region(queries, keys, rank, llvm::formatv("{0},{1}", row, col).str());
  }
  // The scores causal masking hides: keys past each row's diagonal
  // (bottom-right aligned).
  double w = problem.keyLen * scale, h = problem.queryLen * scale;
  if (problem.causal) {
    int64_t shift = problem.keyLen - problem.queryLen;
    auto point = [&](double key, double row) {
      return std::make_pair(x0 + key * scale, y0 + row * scale);
    };
    // The diagonal key = row + shift + 1 from where it enters the matrix to
    // the last key.
    double startKey = std::max<int64_t>(0, shift + 1);
    double startRow = std::max<int64_t>(0, -(shift + 1));
    SmallVector<std::pair<double, double>> hidden;
    if (startRow > 0)
      hidden.push_back(point(0, 0));
    hidden.push_back(point(problem.keyLen, 0));
    hidden.push_back(
        point(problem.keyLen,
              std::min<double>(problem.queryLen, problem.keyLen - shift - 1)));
    hidden.push_back(point(startKey, startRow));
    svg.polygon(hidden, "white", 0.75);
  }
  svg.rect(x0, y0, w, h, "none", "black", 1);
  svg.text(x0 + w / 2, y0 - 6,
           llvm::formatv("keys 0 .. {0}", problem.keyLen).str(), 11, "middle");
  svg.text(x0 - 8, y0 + 12, "0", 11, "end");
  svg.text(x0 - 8, y0 + h, std::to_string(problem.queryLen), 11, "end");
  svg.text(x0, y0 + h + 20,
           problem.causal ? "rows: queries; faded: scores the causal mask "
                            "hides (their blocks are skipped)"
                          : "rows: queries",
           11);
  return svg.finish(std::max(x0 + w + kMargin, 760.0), y0 + h + 40);
}

} // namespace

std::string mlir::attn::drawSchedule(const AttentionProblem &problem,
                                     int64_t blockM, int64_t blockN,
                                     Attribute partition, StringRef title,
                                     const DerivedBlockMask *blockMask) {
  if (std::optional<DistributedLayout> layout =
          DistributedLayout::of(partition))
    return drawRanks(problem, *layout, title);
  return drawBlocks(problem, blockM, blockN, partition, title, blockMask);
}

std::string mlir::attn::drawGradSchedule(const AttentionProblem &problem,
                                         int64_t blockM, int64_t blockN,
                                         int64_t pieces, StringRef title) {
  IntegerArith a;
  int64_t queryBlocks = problem.queryBlocks(blockM);
  int64_t kvBlocks = llvm::divideCeil(problem.keyLen, blockN);
  int64_t rows = std::min(kvBlocks, kMaxRows);
  int64_t cols = std::min(queryBlocks, kMaxCols);
  std::vector<std::vector<Cell>> grid(rows, std::vector<Cell>(cols));
  std::vector<std::string> labels;
  for (int64_t n = 0; n < rows; ++n) {
    int64_t owner = 0;
    for (int64_t piece = 0; piece < pieces; ++piece) {
      auto [begin, end] = splitKVPiece(a, int64_t(0), kvBlocks, piece, pieces);
      if (n >= begin && n < end)
        owner = piece;
    }
    labels.push_back(llvm::formatv("n{0}", n).str());
    IndexRange range = problem.queryBlockRange(n, blockM, blockN);
    for (int64_t m = range.begin; m < std::min(range.end, cols); ++m) {
      Cell &cell = grid[n][m];
      cell.owner = owner;
      cell.masked = !problem.isBlockUnmasked(m, n, blockM, blockN);
    }
  }
  std::string what = llvm::formatv(
      "FlashAttention-2 backward: colour = the piece (of {0}) whose program "
      "owns the row's dK and dV, over the {1} query heads of its key/value "
      "head",
      pieces, problem.groupSize());
  std::string axes = llvm::formatv(
      "rows: key/value blocks of {0} keys ({1} in all{2}); columns: query "
      "blocks of {3} rows ({4} in all{5})",
      blockN, kvBlocks, rows < kvBlocks ? ", first shown" : "", blockM,
      queryBlocks, cols < queryBlocks ? ", first shown" : "");
  return drawGrid(grid, labels, title, what, axes, pieces > 1,
                  /*blockMaskLegend=*/false);
}
