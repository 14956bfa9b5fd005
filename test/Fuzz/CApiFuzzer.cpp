//===- CApiFuzzer.cpp - Fuzz the C API over specs and arrays --------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target attn-fuzz-capi. The input's first 32 bytes describe an
// AttnAttentionSpec (include/attn-c/Attn.h) and the lengths of one run; the
// rest are Q, K, V, the masks and the key lengths, cycled. The spec goes
// through attnAttentionSpecCheck and attnCpuAttentionCompile (compiled
// attentions are kept by spec, so most inputs only run); a spec they accept
// runs through attnCpuAttentionRun, and its O and LSE must match the float64
// reference (lib/Reference, which shares no code with the compiler) within
// the element type's tolerance. Some inputs set a field to a raw 64-bit
// value, which the checks must refuse or take. Fails on a crash, a
// sanitizer report, a refusal without a message, or a wrong result.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Attn.h"

#include "attn/Reference/ReferenceAttention.h"
#include "attn/Support/HalfFloat.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace mlir::attn;

namespace {

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "attn-fuzz-capi: %s\n", what.c_str());
  std::abort();
}

/// Reads the input's bytes in order, zeros past its end.
class Bytes {
public:
  Bytes(const uint8_t *data, size_t size) : data(data), size(size) {}
  uint8_t next() { return at < size ? data[at++] : 0; }
  int64_t raw() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i)
      value = value << 8 | next();
    return static_cast<int64_t>(value);
  }
  /// The rest, for array values.
  const uint8_t *rest() const { return data + std::min(at, size); }
  size_t restSize() const { return size - std::min(at, size); }

private:
  const uint8_t *data;
  size_t size, at = 0;
};

/// The description the spec was built from, and the run's lengths.
struct Case {
  AttnAttentionSpec spec{};
  AttnAttentionLengths lengths{};
  std::string dtype, maskDtype;
  bool raw = false;
};

const char *const kDtypes[] = {"f32", "f16", "bf16", "f64"};
const char *const kMaskDtypes[] = {"i1", "f32", "f16", "bf16"};

Case decode(Bytes &in) {
  Case c;
  AttnAttentionSpec &s = c.spec;
  uint8_t flags = in.next(), more = in.next();
  int64_t kvHeads = 1 + in.next() % 3, group = 1 + in.next() % 3;
  s.batch = 1 + in.next() % 3;
  s.kv_heads = kvHeads;
  s.query_heads = kvHeads * group;
  s.query_len = 1 + in.next() % 20;
  s.key_len = 1 + in.next() % 40;
  s.head_dim = 1 + in.next() % 32;
  s.value_dim = 1 + in.next() % 32;
  c.dtype = kDtypes[in.next() % 4];
  s.causal = flags & 1;
  s.with_lse = flags & 2;
  s.key_lengths = flags & 4;
  s.run_time_lengths = flags & 8;
  s.has_window = flags & 16;
  if (s.has_window) {
    s.window_left = in.next() % 24;
    s.window_right = in.next() % 24;
  }
  s.has_scale = flags & 32;
  if (s.has_scale)
    s.scale = (1 + in.next()) / 64.0f;
  s.has_softcap = flags & 64;
  if (s.has_softcap)
    s.softcap = 0.25f + in.next() / 16.0f;
  if (flags & 128) {
    c.maskDtype = kMaskDtypes[in.next() % 4];
    s.mask_batch = more & 1 ? s.batch : 1;
    s.mask_heads = more & 2 ? s.query_heads : 1;
  }
  if (more & 4) {
    s.block_rows = 1 + in.next() % 16;
    s.block_keys = 1 + in.next() % 16;
    s.block_mask_batch = more & 8 ? s.batch : 1;
    s.block_mask_heads = more & 16 ? s.query_heads : 1;
  }
  c.lengths = {s.batch, s.query_len, s.key_len};
  if (s.run_time_lengths && (more & 32))
    c.lengths = {1 + in.next() % 3, 1 + in.next() % 20, 1 + in.next() % 40};
  if (more & 64) {
    // One field set to a raw value: the checks' side.
    c.raw = true;
    int64_t value = in.raw();
    int64_t *fields[] = {&s.batch,      &s.query_heads, &s.kv_heads,
                         &s.query_len,  &s.key_len,     &s.head_dim,
                         &s.value_dim,  &s.window_left, &s.mask_batch,
                         &s.block_rows, &s.block_keys,  &c.lengths.key_len};
    *fields[in.next() % std::size(fields)] = value;
  }
  if (!s.run_time_lengths)
    c.lengths = {s.batch, s.query_len, s.key_len};
  s.dtype = c.dtype.c_str();
  s.out_dtype = s.dtype;
  s.mask_dtype = c.maskDtype.empty() ? nullptr : c.maskDtype.c_str();
  return c;
}

/// Compiled attentions by spec (a handful: compiling is the slow part).
class Compiled {
public:
  AttnCpuAttentionRef get(const AttnAttentionSpec &spec, std::string &error) {
    const AttnAttentionSpec &p = spec;
    std::string key;
    for (int64_t field : {p.batch,
                          p.query_heads,
                          p.kv_heads,
                          p.query_len,
                          p.key_len,
                          p.head_dim,
                          p.value_dim,
                          int64_t(p.causal),
                          int64_t(p.has_window),
                          p.window_left,
                          p.window_right,
                          int64_t(p.has_scale),
                          int64_t(p.has_softcap),
                          int64_t(p.with_lse),
                          int64_t(p.key_lengths),
                          p.mask_batch,
                          p.mask_heads,
                          p.block_rows,
                          p.block_keys,
                          p.block_mask_batch,
                          p.block_mask_heads,
                          int64_t(p.run_time_lengths)})
      key += std::to_string(field) + ",";
    key += std::to_string(p.scale) + "," + std::to_string(p.softcap) + "," +
           p.dtype + "," + (p.mask_dtype ? p.mask_dtype : "");
    auto it = cache.find(key);
    if (it != cache.end())
      return it->second.get();
    char *message = nullptr;
    AttnCpuAttentionRef compiled = attnCpuAttentionCompile(&spec, &message);
    if (!compiled) {
      error = message ? message : "";
      attnStringFree(message);
      if (error.empty())
        fail("attnCpuAttentionCompile refused a spec without a message");
      return nullptr;
    }
    if (cache.size() >= 8)
      cache.clear();
    return cache.emplace(key, Handle(compiled)).first->second.get();
  }

private:
  struct Destroy {
    void operator()(AttnCpuAttention *a) const { attnCpuAttentionDestroy(a); }
  };
  using Handle = std::unique_ptr<AttnCpuAttention, Destroy>;
  std::map<std::string, Handle> cache;
};

/// Values for an array: the input's bytes cycled, as small integers and
/// halves (exact in every element type).
std::vector<double> values(Bytes &in, int64_t count) {
  std::vector<double> out(count);
  const uint8_t *data = in.rest();
  size_t size = in.restSize();
  for (int64_t i = 0; i < count; ++i) {
    uint8_t byte = size ? data[(i * 7 + count) % size] : uint8_t(i * 37);
    out[i] = (static_cast<int>(byte % 17) - 8) / 4.0;
  }
  return out;
}

/// `values` in the element type's storage.
std::vector<uint8_t> store(const std::vector<double> &values,
                           const std::string &dtype) {
  std::vector<uint8_t> bytes;
  if (dtype == "f32" || dtype == "i32" || dtype == "i1" || dtype == "i8") {
    size_t width = dtype == "f32" || dtype == "i32" ? 4 : 1;
    bytes.resize(values.size() * width);
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == "f32") {
        float f = values[i];
        std::memcpy(&bytes[i * 4], &f, 4);
      } else if (dtype == "i32") {
        int32_t v = static_cast<int32_t>(values[i]);
        std::memcpy(&bytes[i * 4], &v, 4);
      } else {
        bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(values[i]));
      }
    }
    return bytes;
  }
  HalfFormat format = dtype == "f16" ? HalfFormat::F16 : HalfFormat::BF16;
  bytes.resize(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = floatToHalfBits(static_cast<float>(values[i]), format);
    std::memcpy(&bytes[i * 2], &bits, 2);
  }
  return bytes;
}

double load(const uint8_t *bytes, size_t i, const std::string &dtype) {
  if (dtype == "f32") {
    float f;
    std::memcpy(&f, bytes + i * 4, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, bytes + i * 2, 2);
  return halfBitsToFloat(bits, dtype == "f16" ? HalfFormat::F16
                                              : HalfFormat::BF16);
}

void runAndCheck(AttnCpuAttentionRef attention, const Case &c, Bytes &in) {
  const AttnAttentionSpec &s = c.spec;
  auto [batch, queryLen, keyLen] = c.lengths;
  // Only the sizes decode() draws are run (a raw one is too large to give
  // buffers for; its checks are exercised in LLVMFuzzerTestOneInput).
  if (batch > 3 || queryLen > 20 || keyLen > 40 || batch < 1 || queryLen < 1 ||
      keyLen < 1 || s.query_heads > 9 || s.kv_heads > 3 || s.head_dim > 32 ||
      s.value_dim > 32 || s.block_rows > 16 || s.block_keys > 16 ||
      s.window_left > 24)
    return;
  AttentionSizes shape{batch,  s.query_heads, s.kv_heads, queryLen,
                       keyLen, s.head_dim,    s.value_dim};
  std::vector<double> q =
      values(in, batch * s.query_heads * queryLen * s.head_dim);
  std::vector<double> k = values(in, batch * s.kv_heads * keyLen * s.head_dim);
  std::vector<double> v = values(in, batch * s.kv_heads * keyLen * s.value_dim);
  reference::AttentionOptions options;
  options.scale = s.has_scale ? s.scale : 1 / std::sqrt(double(s.head_dim));
  options.causal = s.causal;
  if (s.has_window)
    options.window = {s.window_left, s.window_right};
  if (s.has_softcap)
    options.softcap = s.softcap;
  std::vector<uint8_t> mask, blockMask, keyLengths;
  if (s.mask_dtype) {
    reference::ScoreMask m;
    bool boolean = c.maskDtype == "i1";
    m.kind = boolean ? reference::ScoreMask::Kind::Boolean
                     : reference::ScoreMask::Kind::Additive;
    m.batch = s.mask_batch == 1 ? 1 : batch;
    m.heads = s.mask_heads;
    m.values = values(in, m.batch * m.heads * queryLen * keyLen);
    if (boolean)
      for (double &x : m.values)
        x = x > 0;
    mask = store(m.values, c.maskDtype);
    options.mask = std::move(m);
  }
  if (s.block_rows > 0) {
    reference::BlockMask b;
    b.blockRows = s.block_rows;
    b.blockKeys = s.block_keys;
    b.batch = s.block_mask_batch == 1 ? 1 : batch;
    b.heads = s.block_mask_heads;
    int64_t rows = (queryLen + b.blockRows - 1) / b.blockRows;
    int64_t keys = (keyLen + b.blockKeys - 1) / b.blockKeys;
    std::vector<double> blocks = values(in, b.batch * b.heads * rows * keys);
    for (double &x : blocks) {
      x = std::fmod(std::fabs(x * 4), 3);
      b.values.push_back(static_cast<int8_t>(x));
    }
    blockMask = store(blocks, "i8");
    options.blockMask = std::move(b);
  }
  if (s.key_lengths) {
    std::vector<double> lengths = values(in, batch);
    for (double &x : lengths) {
      x = std::clamp<double>(std::fabs(x * 12), 0, keyLen);
      options.keyLengths.push_back(static_cast<int64_t>(x));
    }
    keyLengths = store(lengths, "i32");
  }
  std::vector<uint8_t> qBytes = store(q, c.dtype), kBytes = store(k, c.dtype),
                       vBytes = store(v, c.dtype);
  // The reference reads what the compiled code reads: the stored values.
  for (auto [doubles, bytes] :
       {std::pair(&q, &qBytes), std::pair(&k, &kBytes), std::pair(&v, &vBytes)})
    for (size_t i = 0; i < doubles->size(); ++i)
      (*doubles)[i] = load(bytes->data(), i, c.dtype);
  size_t outCount = batch * s.query_heads * queryLen * s.value_dim;
  std::vector<uint8_t> o(outCount * (c.dtype == "f32" ? 4 : 2));
  std::vector<float> lse(batch * s.query_heads * queryLen);
  char *message = nullptr;
  bool ran = attnCpuAttentionRun(
      attention, s.run_time_lengths ? &c.lengths : nullptr, qBytes.data(),
      kBytes.data(), vBytes.data(), mask.empty() ? nullptr : mask.data(),
      blockMask.empty() ? nullptr
                        : reinterpret_cast<const int8_t *>(blockMask.data()),
      keyLengths.empty() ? nullptr
                         : reinterpret_cast<const int32_t *>(keyLengths.data()),
      o.data(), s.with_lse ? lse.data() : nullptr, &message);
  if (!ran)
    fail(std::string("attnCpuAttentionRun failed on a compiled spec: ") +
         (message ? message : "(no message)"));
  llvm::Expected<reference::AttentionResult> expected =
      reference::referenceAttention(shape, q, k, v, options);
  if (!expected) {
    llvm::consumeError(expected.takeError());
    return;
  }
  // Errors scale with |V| (at most 2): f32 accumulates in f32, f16/bf16 also
  // round P before the second product and O at the end.
  double tolerance = c.dtype == "f32" ? 1e-4 : c.dtype == "f16" ? 2e-2 : 1.5e-1;
  for (size_t i = 0; i < outCount; ++i) {
    double got = load(o.data(), i, c.dtype), want = expected->out[i];
    if (!(std::fabs(got - want) <= tolerance))
      fail("O[" + std::to_string(i) + "] = " + std::to_string(got) +
           ", the reference says " + std::to_string(want));
  }
  if (s.with_lse)
    for (size_t i = 0; i < lse.size(); ++i) {
      double want = expected->lse[i];
      bool agree = std::isinf(want)
                       ? std::isinf(lse[i]) && lse[i] < 0
                       : std::fabs(lse[i] - want) <= 1e-3 * (1 + std::fabs(want));
      if (!agree)
        fail("LSE[" + std::to_string(i) + "] = " + std::to_string(lse[i]) +
             ", the reference says " + std::to_string(want));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Never destroyed: an attention's MLIR context must not outlive LLVM's
  // static objects, which exit() destroys first.
  static Compiled &compiled = *new Compiled;
  Bytes in(data, size);
  Case c = decode(in);
  char *message = nullptr;
  bool valid = attnAttentionSpecCheck(&c.spec, &message);
  std::string checkError = message ? message : "";
  attnStringFree(message);
  if (!valid) {
    if (checkError.empty())
      fail("attnAttentionSpecCheck refused a spec without a message");
    if (!c.raw && c.dtype != "f64")
      fail("a spec of valid fields was refused: " + checkError);
    return 0;
  }
  std::string error;
  AttnCpuAttentionRef attention = compiled.get(c.spec, error);
  if (!attention)
    return 0;
  if (c.raw) {
    // A raw run length must be refused or run (checked against the
    // reference above when small).
    float dummy[1];
    message = nullptr;
    if (c.lengths.key_len < 1 &&
        attnCpuAttentionRun(attention, &c.lengths, dummy, dummy, dummy, dummy,
                            reinterpret_cast<const int8_t *>(dummy),
                            reinterpret_cast<const int32_t *>(dummy), dummy,
                            dummy, &message))
      fail("a run of Sk < 1 was accepted");
    attnStringFree(message);
  }
  runAndCheck(attention, c, in);
  return 0;
}
