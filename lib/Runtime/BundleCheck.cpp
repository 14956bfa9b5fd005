//===- BundleCheck.cpp - A bundle's manifest against its PTX --------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "BundleCheck.h"

#include "attn/Support/SizeLimits.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <utility>

using namespace attn::runtime;

namespace {

//===----------------------------------------------------------------------===//
// PTX tokens
//===----------------------------------------------------------------------===//

/// PTX as words (identifiers, directives, opcodes, numbers: runs of letters,
/// digits and `_$%.`), strings and single punctuation characters, without
/// whitespace and comments. Linear in the text; never fails: a comment or
/// string that runs to the end is recorded.
class Lexer {
public:
  enum Kind { End, Word, String, Punct };
  struct Token {
    Kind kind = End;
    std::string_view text;
    size_t line = 0;

    bool is(char c) const {
      return kind == Punct && text.size() == 1 && text[0] == c;
    }
    bool isWord(std::string_view word) const {
      return kind == Word && text == word;
    }
  };

  explicit Lexer(const std::string &text) : text(&text) {}

  Token next() {
    const std::string &s = *text;
    while (pos < s.size()) {
      char c = s[pos];
      if (c == '\n') {
        ++line;
        ++pos;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos;
      } else if (c == '/' && pos + 1 < s.size() && s[pos + 1] == '/') {
        while (pos < s.size() && s[pos] != '\n')
          ++pos;
      } else if (c == '/' && pos + 1 < s.size() && s[pos + 1] == '*') {
        size_t opened = line;
        size_t end = s.find("*/", pos + 2);
        size_t stop = end == std::string::npos ? s.size() : end + 2;
        for (; pos < stop; ++pos)
          line += s[pos] == '\n';
        if (end == std::string::npos)
          openComment = opened;
      } else {
        break;
      }
    }
    Token token;
    token.line = line;
    if (pos >= s.size())
      return token;
    size_t start = pos;
    char c = s[pos];
    if (isWordChar(c)) {
      while (pos < s.size() && isWordChar(s[pos]))
        ++pos;
      token.kind = Word;
    } else if (c == '"') {
      // To the closing quote or the end of the line.
      for (++pos; pos < s.size() && s[pos] != '"' && s[pos] != '\n'; ++pos)
        if (s[pos] == '\\' && pos + 1 < s.size() && s[pos + 1] != '\n')
          ++pos;
      if (pos < s.size() && s[pos] == '"')
        ++pos;
      token.kind = String;
    } else {
      ++pos;
      token.kind = Punct;
    }
    token.text = std::string_view(s).substr(start, pos - start);
    return token;
  }

  /// The line of a /* comment that runs to the end of the text; 0 if none.
  size_t openComment = 0;

private:
  static bool isWordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '$' || c == '%' || c == '.';
  }

  const std::string *text;
  size_t pos = 0;
  size_t line = 1;
};

bool isPtxType(std::string_view word) {
  static const char *const types[] = {
      ".u8",  ".u16", ".u32", ".u64", ".s8",  ".s16",  ".s32",
      ".s64", ".b8",  ".b16", ".b32", ".b64", ".b128", ".f16",
      ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64", ".pred"};
  for (const char *type : types)
    if (word == type)
      return true;
  return false;
}

/// A non-negative integer token (decimal, or hexadecimal with 0x) of at most
/// 2^31 - 1.
bool readCount(const Lexer::Token &token, int64_t &value) {
  if (token.kind != Lexer::Word || token.text.empty() ||
      !std::isdigit(static_cast<unsigned char>(token.text[0])))
    return false;
  std::string text(token.text);
  char *end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 0);
  if (errno || *end || parsed > std::numeric_limits<int32_t>::max())
    return false;
  value = static_cast<int64_t>(parsed);
  return true;
}

/// The PTX parser: each failure sets `error` and returns false.
class PtxParser {
public:
  PtxParser(const std::string &ptx, const std::string &ptxName,
            std::string &error)
      : lexer(ptx), ptxName(ptxName), error(error) {}

  bool parse(PtxModule &module) {
    Lexer::Token token = next();
    if (!token.isWord(".version") || !isNumber(next()))
      return notPtx();
    bool target = false;
    for (token = next(); token.kind != Lexer::End;
         token = next()) {
      if (token.is('{')) {
        if (!skipBlock(token.line, "a block"))
          return false;
      } else if (token.is('}')) {
        return fail("line " + std::to_string(token.line) +
                    ": a '}' that closes nothing");
      } else if (token.isWord(".target")) {
        target |= next().kind == Lexer::Word;
      } else if (token.isWord(".entry")) {
        if (!parseEntry(token.line, module.entries.emplace_back()))
          return false;
      }
    }
    if (lexer.openComment)
      return truncated("a comment opened at line " +
                       std::to_string(lexer.openComment));
    if (!target)
      return notPtx();
    return true;
  }

private:
  static bool isNumber(const Lexer::Token &token) {
    return token.kind == Lexer::Word && !token.text.empty() &&
           std::isdigit(static_cast<unsigned char>(token.text[0]));
  }

  bool fail(const std::string &message) {
    error = ptxName + ": " + message;
    return false;
  }

  bool notPtx() {
    error = ptxName + " is not PTX (no .version and .target directives)";
    return false;
  }

  bool truncated(const std::string &where) {
    return fail("ends inside " + where +
                ": the file is truncated or not whole PTX");
  }

  /// Skips to the `}` that closes a `{` of line `opened`.
  bool skipBlock(size_t opened, const std::string &what) {
    size_t depth = 1;
    for (Lexer::Token token = next();; token = next()) {
      if (token.kind == Lexer::End)
        return truncated(what + " opened at line " + std::to_string(opened) +
                         (lexer.openComment ? " (in a comment opened at "
                                              "line " +
                                                  std::to_string(
                                                      lexer.openComment) +
                                                  ")"
                                            : ""));
      if (token.is('{'))
        ++depth;
      else if (token.is('}') && --depth == 0)
        return true;
    }
  }

  /// `.entry NAME (.param ..., ...) DIRECTIVES { BODY }` or `... ;`, after
  /// `.entry`.
  bool parseEntry(size_t line, PtxEntry &entry) {
    entry.line = line;
    Lexer::Token name = next();
    if (name.kind != Lexer::Word || name.text[0] == '.' ||
        std::isdigit(static_cast<unsigned char>(name.text[0])))
      return fail("line " + std::to_string(line) +
                  ": .entry is not followed by a kernel name");
    entry.name = std::string(name.text);
    std::string kernel = "kernel " + entry.name;
    Lexer::Token token = next();
    if (token.is('(')) {
      if (!parseParams(entry, kernel))
        return false;
    } else {
      unread(token);
    }
    // Performance directives up to the body.
    for (;;) {
      token = next();
      if (token.kind == Lexer::End)
        return truncated("the declaration of " + kernel + " (line " +
                         std::to_string(line) + "), before its body");
      if (token.is('{')) {
        entry.hasBody = true;
        return skipBlock(token.line, "the body of " + kernel);
      }
      if (token.is(';'))
        return true;
      if (token.isWord(".maxntid") || token.isWord(".reqntid")) {
        int64_t *sizes =
            token.isWord(".maxntid") ? entry.maxntid : entry.reqntid;
        sizes[0] = sizes[1] = sizes[2] = 1;
        for (int axis = 0;; ++axis) {
          if (axis == 3 || !readCount(next(), sizes[axis]) || sizes[axis] < 1)
            return fail("line " + std::to_string(token.line) + ": " + kernel +
                        "'s " + std::string(token.text) +
                        " is not 1 to 3 positive counts");
          Lexer::Token after = next();
          if (!after.is(',')) {
            unread(after);
            break;
          }
        }
      } else if (token.isWord(".pragma")) {
        // `.pragma "...";` ends the directive, not a declaration.
        Lexer::Token after = next();
        while (after.kind == Lexer::String || after.is(','))
          after = next();
        if (!after.is(';'))
          return fail("line " + std::to_string(token.line) + ": " + kernel +
                      "'s .pragma is not strings and a ';'");
      }
    }
  }

  /// The parameter list, after `(`, to its `)`.
  bool parseParams(PtxEntry &entry, const std::string &kernel) {
    auto malformed = [&](const Lexer::Token &token) {
      return fail("line " + std::to_string(token.line) + ": " + kernel +
                  "'s parameter list has \"" + std::string(token.text) +
                  "\" where a .param declaration belongs");
    };
    Lexer::Token token = next();
    if (token.is(')'))
      return true;
    for (;;) {
      if (token.kind == Lexer::End)
        return truncated("the parameter list of " + kernel);
      if (!token.isWord(".param"))
        return malformed(token);
      PtxParam &param = entry.params.emplace_back();
      bool named = false;
      for (token = next();; token = next()) {
        if (token.kind == Lexer::End)
          return truncated("the parameter list of " + kernel);
        if (token.is(',') || token.is(')'))
          break;
        if (token.is('[')) {
          param.array = true;
          token = next();
          if (token.kind == Lexer::Word &&
              std::isdigit(static_cast<unsigned char>(token.text[0])))
            param.arrayLength = std::atoll(std::string(token.text).c_str());
          else
            unread(token);
        } else if (token.isWord(".align")) {
          token = next();
          if (token.kind != Lexer::Word ||
              !std::isdigit(static_cast<unsigned char>(token.text[0])))
            return malformed(token);
          param.alignment = std::atoll(std::string(token.text).c_str());
        } else if (token.isWord(".ptr")) {
          param.pointer = true;
        } else if (token.kind == Lexer::Word && isPtxType(token.text)) {
          if (!param.type.empty())
            return malformed(token);
          param.type = std::string(token.text.substr(1));
        } else if (token.kind == Lexer::Word && token.text[0] != '.' &&
                   !std::isdigit(static_cast<unsigned char>(token.text[0]))) {
          named = true;
        } else if (token.kind != Lexer::Word && !token.is(']')) {
          return malformed(token);
        }
      }
      if (!named || param.type.empty())
        return fail("line " + std::to_string(token.line) + ": " + kernel +
                    "'s parameter " + std::to_string(entry.params.size() - 1) +
                    " has no " + (param.type.empty() ? "type" : "name"));
      if (token.is(')'))
        return true;
      token = next();
    }
  }

  Lexer::Token next() {
    if (hasPending) {
      hasPending = false;
      return pending;
    }
    return lexer.next();
  }
  /// Gives `token` back: the next `next()` returns it.
  void unread(const Lexer::Token &token) {
    pending = token;
    hasPending = true;
  }

  Lexer lexer;
  const std::string &ptxName;
  std::string &error;
  Lexer::Token pending;
  bool hasPending = false;
};

} // namespace

//===----------------------------------------------------------------------===//
// PtxParam, PtxModule, parsePtx
//===----------------------------------------------------------------------===//

bool PtxParam::is64BitInteger() const {
  return !array && (type == "u64" || type == "s64" || type == "b64");
}

bool PtxParam::isTensorMap() const {
  return array && arrayLength == 128 && (type == "b8" || type == "u8") &&
         alignment >= 64;
}

std::string PtxParam::kind() const {
  if (array)
    return (alignment ? ".align " + std::to_string(alignment) + " " : "") +
           type + "[" + (arrayLength ? std::to_string(arrayLength) : "") + "]";
  return pointer && is64BitInteger() ? std::string("ptr") : type;
}

const PtxEntry *PtxModule::find(const std::string &name) const {
  const PtxEntry *declaration = nullptr;
  for (const PtxEntry &entry : entries)
    if (entry.name == name) {
      if (entry.hasBody)
        return &entry;
      declaration = &entry;
    }
  return declaration;
}

bool attn::runtime::parsePtx(const std::string &ptx,
                             const std::string &ptxName, PtxModule &module,
                             std::string &error) {
  return PtxParser(ptx, ptxName, error).parse(module);
}

//===----------------------------------------------------------------------===//
// The manifest against the PTX and itself
//===----------------------------------------------------------------------===//

namespace {

/// The most shared memory any CUDA device gives one block (sm_90, sm_100:
/// 227 KiB opt-in). A device's own, smaller limit is checked when a bundle
/// is loaded on it (attnrtBundleLoad).
constexpr int64_t kMaxSharedBytesPerBlock = 227 * 1024;

/// A * B and A + B, saturated at INT64_MAX (sizes from a manifest may be
/// as large as 2^48 and tile counts 2^31: a product of three overflows),
/// so that a need too large to meet compares as one.
int64_t mul(int64_t a, int64_t b) {
  return mlir::attn::checkedMul(a, b).value_or(
      std::numeric_limits<int64_t>::max());
}
int64_t add(int64_t a, int64_t b) {
  return mlir::attn::checkedAdd(a, b).value_or(
      std::numeric_limits<int64_t>::max());
}

std::string plural(size_t count, const std::string &noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

/// "4 x ptr, 12 x u64": kinds in order, runs counted.
std::string describeKinds(const std::vector<std::string> &kinds) {
  if (kinds.empty())
    return "none";
  std::string text;
  for (size_t i = 0; i < kinds.size();) {
    size_t run = i;
    while (run < kinds.size() && kinds[run] == kinds[i])
      ++run;
    text += (text.empty() ? "" : ", ") + std::to_string(run - i) + " x " +
            kinds[i];
    i = run;
  }
  return text;
}

std::string describeTriple(const int64_t values[3], const char *separator) {
  return std::to_string(values[0]) + separator + std::to_string(values[1]) +
         separator + std::to_string(values[2]);
}

std::string describeTerm(const KernelSpec &kernel, const GridTerm &term) {
  if (term.param < 0)
    return std::to_string(term.constant);
  std::string size =
      kernel.params[term.param].name + ".size(" + std::to_string(term.dim) + ")";
  if (term.times != 1)
    size += " x " + std::to_string(term.times);
  return term.ceilDiv == 1
             ? size
             : "ceil(" + size + " / " + std::to_string(term.ceilDiv) + ")";
}

bool isTerm(const GridTerm &term, int32_t param, int32_t dim, int64_t times,
            int64_t ceilDiv) {
  return term.param == param && term.dim == dim && term.times == times &&
         term.ceilDiv == ceilDiv;
}

class BundleChecker {
public:
  BundleChecker(const std::string &manifestName, const std::string &ptxName,
                std::string &error)
      : manifestName(manifestName), ptxName(ptxName), error(error) {}

  bool check(const KernelSpec &kernel, const PtxModule &module) {
    const PtxEntry *entry = module.find(kernel.name);
    if (!entry) {
      error = ptxName + " defines no kernel " + kernel.name +
              " (the manifest's kernel); was it written with this manifest "
              "by attn-compile?";
      return false;
    }
    if (!entry->hasBody) {
      error = ptxName + " declares kernel " + kernel.name +
              " (the manifest's kernel) without defining it";
      return false;
    }
    return checkParams(kernel, *entry) && checkBlock(kernel, *entry) &&
           checkSharedMemory(kernel) && checkGrid(kernel) &&
           checkGradient(kernel);
  }

private:
  bool fail(const KernelSpec &kernel, const std::string &message) {
    error = manifestName + ": kernel " + kernel.name + ": " + message;
    return false;
  }

  /// 1. The runtime passes one 64-bit value per parameter (Runtime.cpp,
  /// attnrtLaunch): the tensors' pointers, the workspaces', then the
  /// scalars; then each tensor map, 128 bytes by value. The entry must take
  /// exactly those.
  bool checkParams(const KernelSpec &kernel, const PtxEntry &entry) {
    size_t pointers = kernel.params.size() + kernel.workspaces.size();
    size_t values = pointers + kernel.scalars.size();
    std::vector<std::string> expected(pointers, "ptr");
    expected.resize(values, "u64");
    expected.resize(values + kernel.tensorMaps.size(), ".align 64 b8[128]");
    std::vector<std::string> actual;
    bool matches = entry.params.size() == expected.size();
    for (size_t i = 0; i < entry.params.size(); ++i) {
      const PtxParam &param = entry.params[i];
      actual.push_back(param.kind());
      // A pointer may be declared a plain .u64 (only LLVM marks .ptr); a
      // scalar must not be a pointer.
      if (i >= values
              ? !param.isTensorMap()
              : !param.is64BitInteger() || (i >= pointers && param.pointer))
        matches = false;
    }
    if (matches)
      return true;
    return fail(
        kernel,
        "the manifest gives it " + plural(expected.size(), "parameter") + " (" +
            plural(kernel.params.size(), "tensor") + ", " +
            plural(kernel.workspaces.size(), "workspace") + ", " +
            plural(kernel.scalars.size(), "scalar") + ", " +
            plural(kernel.tensorMaps.size(), "tensor map") + ": " +
            describeKinds(expected) + "), its entry in " + ptxName + " (line " +
            std::to_string(entry.line) + ") takes " +
            std::to_string(entry.params.size()) + " (" + describeKinds(actual) +
            "); the runtime passes the tensors' and workspaces' "
            "pointers, then the scalars, each as 64 bits, then the "
            "tensor maps, 128 bytes each");
  }

  /// 2. The block the kernel was compiled for: its .reqntid or .maxntid
  /// (attn-compile's kernels state the block they lay their tiles over as
  /// .maxntid), and its tiles' warps with its producer warps.
  bool checkBlock(const KernelSpec &kernel, const PtxEntry &entry) {
    int64_t block[3] = {kernel.block[0], kernel.block[1], kernel.block[2]};
    std::string blockText = "[" + describeTriple(block, ", ") + "]";
    for (const auto &[directive, sizes] :
         {std::pair<const char *, const int64_t *>{".reqntid", entry.reqntid},
          {".maxntid", entry.maxntid}}) {
      if (!sizes[0])
        continue;
      if (sizes[0] != block[0] || sizes[1] != block[1] || sizes[2] != block[2])
        return fail(kernel, "block " + blockText + " is not the " +
                                describeTriple(sizes, ", ") +
                                " threads its entry in " + ptxName +
                                " was compiled for (" + directive + ")");
    }
    int64_t threads = block[0] * block[1] * block[2];
    int64_t warps = kernel.tiles.warps + kernel.producerWarps;
    if (threads != mul(32, warps))
      return fail(
          kernel,
          "block " + blockText + " has " + std::to_string(threads) +
              " threads, its tiles' " + plural(kernel.tiles.warps, "warp") +
              (kernel.producerWarps
                   ? " and " + plural(kernel.producerWarps, "producer warp")
                   : std::string()) +
              " " + std::to_string(mul(32, warps)));
    return true;
  }

  /// Whether the kernel is an attention's, Q, K, V and O [B, H, S, D] first:
  /// one whose shared memory, grid and workspaces follow from its tiles.
  static bool isAttention(const KernelSpec &kernel) {
    static const char *const names[] = {"Q", "K", "V", "O"};
    if (kernel.gradient || kernel.params.size() < 4)
      return false;
    for (int i = 0; i < 4; ++i)
      if (kernel.params[i].name != names[i] || kernel.params[i].rank != 4)
        return false;
    return true;
  }

  /// Elements of a shared-memory row of `dim` values: whole swizzle periods
  /// of 64 (lib/Analysis/Fa2Defaults.cpp, fa2SharedRowElements).
  static int64_t sharedRow(int64_t dim) { return mul((dim + 63) / 64, 64); }

  /// 3. The limit, and what the tiles stage: the Q block (which also stages
  /// O, as wide as the wider), plus `stages` K and V tiles, in Q's element
  /// size (fa2SharedMemoryBytes).
  bool checkSharedMemory(const KernelSpec &kernel) {
    if (kernel.dynamicSharedBytes > kMaxSharedBytesPerBlock)
      return fail(kernel, "dynamic_shared_memory " +
                              std::to_string(kernel.dynamicSharedBytes) +
                              " exceeds " +
                              std::to_string(kMaxSharedBytesPerBlock) +
                              " bytes (227 KiB), the most any GPU gives a "
                              "block");
    if (!isAttention(kernel))
      return true;
    int64_t headDim = kernel.params[0].sizes[3];
    int64_t valueDim = kernel.params[2].sizes[3];
    if (headDim < 0 || valueDim < 0)
      return true;
    const TileSpec &tiles = kernel.tiles;
    int64_t keyRow = sharedRow(headDim), valueRow = sharedRow(valueDim);
    int64_t elementBytes =
        static_cast<int64_t>(attnrtDTypeSize(kernel.params[0].dtype));
    int64_t need = mul(
        add(mul(tiles.blockM, std::max(keyRow, valueRow)),
            mul(mul(tiles.stages, tiles.blockN), add(keyRow, valueRow))),
        elementBytes);
    if (kernel.dynamicSharedBytes >= need)
      return true;
    return fail(kernel,
                "dynamic_shared_memory " +
                    std::to_string(kernel.dynamicSharedBytes) +
                    " is less than the " + std::to_string(need) +
                    " bytes its tiles stage (a " +
                    std::to_string(tiles.blockM) + "-row Q block and " +
                    std::to_string(tiles.stages) + " x " +
                    std::to_string(tiles.blockN) +
                    "-row K and V tiles, rows of D = " +
                    std::to_string(headDim) + " and Dv = " +
                    std::to_string(valueDim) + " padded to " +
                    std::to_string(keyRow) + " and " +
                    std::to_string(valueRow) + ", " +
                    std::to_string(elementBytes) + "-byte elements)");
  }

  /// 6. A backward kernel (lib/Conversion/AttnToNVGPU/Fa2GradKernel.h):
  /// Q, K, V, O, LSE, dO, dQ, dK, dV of static shapes, then those it has of
  /// the mask ([B or 1, Hq or 1, Sq, Sk], i1 or a float type), the block
  /// mask ([B or 1, Hq or 1, ceil(Sq / Bq), ceil(Sk / Bk)] i8, Bq and Bk the
  /// attention's block_mask_blocks) and key_lengths ([B] i32), in that
  /// order; no workspace, the grid (ceil(Sk / block_m) Hkv + ceil(Sq /
  /// block_m) Hq, B, 1), and shared memory for block_m own rows and block_n
  /// streamed rows of the two row widths, and two f32 arrays of
  /// max(block_m, block_n).
  bool checkGradient(const KernelSpec &kernel) {
    if (!kernel.gradient)
      return true;
    static const char *const names[] = {"Q",  "K",  "V",  "O", "LSE",
                                        "dO", "dQ", "dK", "dV"};
    static const char *const optional[] = {"mask", "block_mask", "key_lengths"};
    size_t count = kernel.params.size();
    bool layout = count >= 9;
    for (size_t i = 0, next = 0; layout && i < count; ++i) {
      const ParamSpec &param = kernel.params[i];
      if (i < 9) {
        layout = param.name == names[i] && param.rank == (i == 4 ? 3 : 4);
      } else {
        while (next < 3 && param.name != optional[next])
          ++next;
        layout = next++ < 3;
      }
      for (int32_t d = 0; layout && d < param.rank; ++d)
        layout = param.sizes[d] >= 0;
      if (!layout || i < 9)
        continue;
      const int64_t *q = kernel.params[0].sizes, *k = kernel.params[1].sizes;
      const int64_t *sizes = param.sizes;
      bool leading = param.rank == 4 && (sizes[0] == 1 || sizes[0] == q[0]) &&
                     (sizes[1] == 1 || sizes[1] == q[1]);
      int64_t rows = kernel.attention.blockMaskRows,
              keys = kernel.attention.blockMaskKeys;
      if (param.name == "mask")
        layout = leading && sizes[2] == q[2] && sizes[3] == k[2] &&
                 (param.dtype == ATTNRT_I1 || param.dtype == ATTNRT_F16 ||
                  param.dtype == ATTNRT_BF16 || param.dtype == ATTNRT_F32);
      else if (param.name == "block_mask")
        layout = leading && param.dtype == ATTNRT_I8 && rows > 0 &&
                 sizes[2] == (q[2] + rows - 1) / rows &&
                 sizes[3] == (k[2] + keys - 1) / keys;
      else
        layout =
            param.rank == 1 && param.dtype == ATTNRT_I32 && sizes[0] == q[0];
    }
    if (!layout)
      return fail(kernel, "a backward kernel's parameters are Q, K, V, O, "
                          "LSE, dO, dQ, dK and dV, of static shapes, then "
                          "those it has of the mask ([B or 1, Hq or 1, Sq, "
                          "Sk] of i1, f16, bf16 or f32), the block mask ([B "
                          "or 1, Hq or 1, ceil(Sq / Bq), ceil(Sk / Bk)] i8) "
                          "and key_lengths ([B] i32)");
    if (!kernel.workspaces.empty())
      return fail(kernel, "a backward kernel has no workspaces");
    const TileSpec &tiles = kernel.tiles;
    const ParamSpec &q = kernel.params[0], &v = kernel.params[2];
    int64_t batch = q.sizes[0], queryHeads = q.sizes[1], queryLen = q.sizes[2];
    int64_t kvHeads = v.sizes[1], keyLen = v.sizes[2];
    int64_t ctas =
        add(mul((keyLen + tiles.blockM - 1) / tiles.blockM, kvHeads),
            mul((queryLen + tiles.blockM - 1) / tiles.blockM, queryHeads));
    const GridTerm *grid = kernel.grid;
    if (grid[0].param >= 0 || grid[1].param >= 0 || grid[2].param >= 0 ||
        grid[0].constant != ctas || grid[1].constant != batch ||
        grid[2].constant != 1)
      return fail(kernel, "a backward kernel's grid is [" +
                              std::to_string(ctas) + ", " +
                              std::to_string(batch) +
                              ", 1] (a CTA per key/value block of each "
                              "key/value head and per query block of each "
                              "query head, block_m " +
                              std::to_string(tiles.blockM) + "), not [" +
                              describeTerm(kernel, grid[0]) + ", " +
                              describeTerm(kernel, grid[1]) + ", " +
                              describeTerm(kernel, grid[2]) + "]");
    int64_t rows = add(tiles.blockM, tiles.blockN);
    int64_t need =
        add(mul(mul(rows, add(sharedRow(q.sizes[3]), sharedRow(v.sizes[3]))),
                static_cast<int64_t>(attnrtDTypeSize(q.dtype))),
            mul(8, std::max(tiles.blockM, tiles.blockN)));
    if (kernel.dynamicSharedBytes < need)
      return fail(kernel, "dynamic_shared_memory " +
                              std::to_string(kernel.dynamicSharedBytes) +
                              " is less than the " + std::to_string(need) +
                              " bytes a backward kernel's tiles stage");
    return true;
  }

  /// Whether `workspaces` are those of the schedule's partials, named
  /// `names`, per CTA or not, each at least `bytes`; otherwise fails with
  /// a message.
  bool checkWorkspaces(const KernelSpec &kernel, const char *schedule,
                       const char *const names[3], bool perCta,
                       const int64_t bytes[3]) {
    const std::vector<WorkspaceSpec> &workspaces = kernel.workspaces;
    std::string expected = std::string(names[0]) + ", " + names[1] + " and " +
                           names[2] + (perCta ? " (bytes_per_cta)" : "");
    std::string actual;
    for (const WorkspaceSpec &workspace : workspaces)
      actual += (actual.empty() ? "" : ", ") + workspace.name;
    bool layout = workspaces.size() == 3;
    for (size_t i = 0; layout && i < 3; ++i)
      layout = workspaces[i].name == names[i] && workspaces[i].perCta == perCta;
    if (!layout)
      return fail(kernel, std::string("a ") + schedule +
                              " kernel's workspaces are " + expected +
                              ", not " + (actual.empty() ? "none" : actual));
    for (size_t i = 0; i < 3; ++i)
      if (workspaces[i].bytes < bytes[i])
        return fail(kernel, "workspace " + workspaces[i].name + " has " +
                                std::to_string(workspaces[i].bytes) +
                                " bytes" + (perCta ? " per CTA" : "") +
                                ", fewer than the " +
                                std::to_string(bytes[i]) +
                                " the kernel writes");
    if (!workspaces[2].zeroInit)
      return fail(kernel, "workspace " + workspaces[2].name +
                              " is not zero_init; the kernel counts on it "
                              "starting at zero");
    return true;
  }

  /// 4. FlashAttention-2's grid, (ceil(p Sq / block_m), B, Hq / p x S),
  /// with split-KV's workspaces when S > 1; or a persistent (Lean) grid [G,
  /// 1, 1] with Lean's workspaces for G CTAs (lib/Conversion/AttnToNVGPU,
  /// kernelWorkspaces; lib/Pipelines/KernelBundle.cpp writes the grid).
  bool checkGrid(const KernelSpec &kernel) {
    if (!isAttention(kernel))
      return true;
    const TileSpec &tiles = kernel.tiles;
    const GridTerm *grid = kernel.grid;
    std::string gridText = "[" + describeTerm(kernel, grid[0]) + ", " +
                           describeTerm(kernel, grid[1]) + ", " +
                           describeTerm(kernel, grid[2]) + "]";
    int64_t valueDim = kernel.params[2].sizes[3];
    // Partials of f32: a block_m x Dv tile of O and block_m LSEs, a 4-byte
    // counter or flag (0 where Dv is dynamic: not checked).
    int64_t partialO = valueDim < 0 ? 0 : mul(mul(tiles.blockM, valueDim), 4);
    int64_t partialLse = mul(tiles.blockM, 4);
    if (kernel.persistent) {
      if (grid[0].param >= 0 || grid[1].param >= 0 || grid[2].param >= 0 ||
          grid[1].constant != 1 || grid[2].constant != 1)
        return fail(kernel, "a persistent (Lean) kernel's grid is [G, 1, 1], "
                            "a fixed set of CTAs, not " +
                                gridText);
      static const char *const names[3] = {"partial_o", "partial_lse",
                                           "flags"};
      // One flag per CTA the kernel was compiled for: a grid of more CTAs
      // writes past the partials, one of fewer waits forever.
      int64_t ctas = grid[0].constant;
      const std::vector<WorkspaceSpec> &workspaces = kernel.workspaces;
      if (workspaces.size() == 3 && workspaces[2].name == names[2] &&
          workspaces[2].bytes / 4 != ctas)
        return fail(kernel, "a persistent grid of " + plural(ctas, "CTA") +
                                ", but its workspaces are for " +
                                std::to_string(workspaces[2].bytes / 4) +
                                " (flags: " +
                                std::to_string(workspaces[2].bytes) +
                                " bytes, 4 a CTA): a Lean kernel runs on the "
                                "CTAs it was compiled for");
      int64_t bytes[3] = {mul(partialO, ctas), mul(partialLse, ctas),
                          mul(4, ctas)};
      return checkWorkspaces(kernel, "Lean", names, /*perCta=*/false, bytes);
    }
    const std::string expected =
        "FlashAttention-2's (ceil(p Sq / block_m), B, Hq / p x splits) with "
        "block_m " +
        std::to_string(tiles.blockM) + " and p (packed_heads) " +
        std::to_string(tiles.packedHeads);
    if (!isTerm(grid[0], 0, 2, tiles.packedHeads, tiles.blockM) ||
        !isTerm(grid[1], 0, 0, 1, 1))
      return fail(kernel, "grid " + gridText + " is not " + expected);
    int64_t queryHeads = kernel.params[0].sizes[1];
    if (queryHeads < 0)
      return true;
    if (queryHeads % tiles.packedHeads)
      return fail(kernel, "its " + plural(queryHeads, "query head") +
                              " are not a multiple of packed_heads " +
                              std::to_string(tiles.packedHeads));
    int64_t tiledHeads = queryHeads / tiles.packedHeads;
    // z as every launch has it: a constant, or a formula of a static size
    // (KernelBundle.cpp writes Q's size 1 where Hq / p x splits is Hq).
    const GridTerm &z = grid[2];
    int64_t zSize = z.param < 0 ? z.constant
                                : kernel.params[z.param].sizes[z.dim];
    if (zSize < 0)
      return fail(kernel, "grid z " + describeTerm(kernel, z) +
                              " is a run-time size; the kernel's is its " +
                              std::to_string(tiledHeads) +
                              " tiled heads times its splits, a constant");
    if (z.param >= 0)
      zSize = add(mul(zSize, z.times), z.ceilDiv - 1) / z.ceilDiv;
    int64_t splits = zSize % tiledHeads ? 0 : zSize / tiledHeads;
    std::string zText = "grid z " + describeTerm(kernel, z) +
                        (z.param >= 0 ? " = " + std::to_string(zSize) : "");
    if (!splits)
      return fail(kernel, zText +
                              " is not its " +
                              std::to_string(tiledHeads) + " tiled heads (Hq " +
                              std::to_string(queryHeads) + " / packed_heads " +
                              std::to_string(tiles.packedHeads) +
                              ") times a split count; its grid must be " +
                              expected);
    if (splits == 1) {
      if (kernel.workspaces.empty())
        return true;
      return fail(kernel, zText +
                              " gives " + std::to_string(tiledHeads) +
                              " tiled heads 1 split each, but the kernel has "
                              "workspaces, which only split-KV's (2 splits "
                              "or more) and Lean's kernels have");
    }
    static const char *const names[3] = {"partial_o", "partial_lse",
                                         "counters"};
    int64_t bytes[3] = {partialO, partialLse, 4};
    std::string splitText = std::to_string(splits) + " splits of each of " +
                            std::to_string(tiledHeads) + " tiled heads";
    if (kernel.workspaces.empty())
      return fail(kernel, zText + " is " +
                              splitText +
                              ", a split-KV grid, but the kernel has none of "
                              "split-KV's workspaces (partial_o, partial_lse, "
                              "counters)");
    return checkWorkspaces(kernel, "split-KV", names, /*perCta=*/true, bytes);
  }

  const std::string &manifestName;
  const std::string &ptxName;
  std::string &error;
};

} // namespace

bool attn::runtime::checkBundle(const Manifest &manifest,
                                const std::string &ptx,
                                const std::string &manifestName,
                                const std::string &ptxName,
                                std::string &error) {
  PtxModule module;
  if (!parsePtx(ptx, ptxName, module, error))
    return false;
  BundleChecker checker(manifestName, ptxName, error);
  for (const KernelSpec &kernel : manifest.kernels)
    if (!checker.check(kernel, module))
      return false;
  return true;
}
