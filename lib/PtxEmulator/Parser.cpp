//===- Parser.cpp - PTX text to the emulator's module ---------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The module-level grammar of PTX (PTX ISA, "Syntax" and "State Spaces,
// Types, and Variables"): directives, variable declarations with
// initialisers, .entry kernels with their parameters, register declarations
// (%r<N> ranges), labels, nested blocks and instructions with guards. Each
// instruction's opcode word is decoded by Decode.cpp.
//
//===----------------------------------------------------------------------===//

#include "Decode.h"

#include <cctype>
#include <cstring>
#include <unordered_map>

using namespace attn::ptxemu;

namespace {

struct Token {
  enum class Kind { Word, Number, Punct, String, End } kind = Kind::End;
  std::string text;
  uint32_t line = 0;
};

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '%' || c == '.' || c == ':';
}

/// Splits PTX into tokens; comments are dropped. A word holds dots and
/// "::" (ld.global.L1::no_allocate.f32 is one word); a label's ':' is a
/// separate token.
bool tokenize(std::string_view text, std::vector<Token> &tokens,
              std::string &error) {
  uint32_t line = 1;
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) {
        if (text[i] == '\n')
          ++line;
        ++i;
      }
      i += 2;
      continue;
    }
    Token token;
    token.line = line;
    if (c == '"') {
      size_t start = ++i;
      while (i < n && text[i] != '"')
        ++i;
      token.kind = Token::Kind::String;
      token.text = std::string(text.substr(start, i - start));
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i;
      while (i < n && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                       text[i] == '.'))
        ++i;
      token.kind = Token::Kind::Number;
      token.text = std::string(text.substr(start, i - start));
    } else if (isWordChar(c) && c != ':') {
      size_t start = i;
      while (i < n && isWordChar(text[i])) {
        // A label's colon ends the word unless it is "::".
        if (text[i] == ':' && !(i + 1 < n && text[i + 1] == ':') &&
            !(i > start && text[i - 1] == ':'))
          break;
        ++i;
      }
      token.kind = Token::Kind::Word;
      token.text = std::string(text.substr(start, i - start));
    } else if (std::strchr("{}()[],;:+-<>=@!|", c)) {
      token.kind = Token::Kind::Punct;
      token.text = std::string(1, c);
      ++i;
    } else {
      error = "line " + std::to_string(line) + ": unexpected character '" +
              std::string(1, c) + "'";
      return false;
    }
    tokens.push_back(std::move(token));
  }
  Token end;
  end.line = line;
  tokens.push_back(end);
  return true;
}

/// What a kernel may declare: registers (LLVM's kernels declare a few
/// thousand; each costs 256 bytes per warp here), one shared variable (a
/// block's 227 KiB), a thread's local memory (512 KiB, the GPU's), a
/// constant bank (64 KiB), and all global variables together (the
/// emulator's bound: they live in host memory).
constexpr uint64_t kRegisterLimit = 1 << 16, kSharedLimit = 227 * 1024,
                   kLocalLimit = 512 * 1024, kConstLimit = 64 * 1024,
                   kVariableLimit = uint64_t(256) << 20;

bool parseInteger(const std::string &text, uint64_t &value) {
  if (text.empty())
    return false;
  const char *s = text.c_str();
  char *end = nullptr;
  errno = 0;
  size_t length = text.size();
  bool isUnsigned = length > 1 && (text.back() == 'U' || text.back() == 'u');
  std::string digits = isUnsigned ? text.substr(0, length - 1) : text;
  s = digits.c_str();
  if (digits.size() > 2 && digits[0] == '0' &&
      (digits[1] == 'x' || digits[1] == 'X'))
    value = std::strtoull(s + 2, &end, 16);
  else if (digits.size() > 2 && digits[0] == '0' &&
           (digits[1] == 'b' || digits[1] == 'B'))
    value = std::strtoull(s + 2, &end, 2);
  else if (digits.size() > 1 && digits[0] == '0')
    value = std::strtoull(s + 1, &end, 8);
  else
    value = std::strtoull(s, &end, 10);
  return errno == 0 && end && *end == '\0';
}

class Parser {
public:
  Parser(std::vector<Token> tokens, Module &module)
      : tokens(std::move(tokens)), module(module) {}

  bool parse(std::string &error);

private:
  const Token &peek(size_t ahead = 0) const {
    return tokens[std::min(position + ahead, tokens.size() - 1)];
  }
  Token next() { return tokens[std::min(position++, tokens.size() - 1)]; }
  bool isPunct(const char *p, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Punct && peek(ahead).text == p;
  }
  bool isWord(const char *w, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Word && peek(ahead).text == w;
  }
  bool fail(const std::string &message) {
    if (failure.empty())
      failure = "line " + std::to_string(peek().line) + ": " + message;
    return false;
  }
  bool expectPunct(const char *p) {
    if (!isPunct(p))
      return fail(std::string("expected '") + p + "', found '" + peek().text +
                  "'");
    ++position;
    return true;
  }
  static bool isDebugDirective(const std::string &word) {
    return word == ".file" || word == ".loc" || word == ".pragma";
  }
  /// Skips a debug directive: the rest of its line, up to a ';'.
  void skipLine() {
    uint32_t line = peek().line;
    while (peek().kind != Token::Kind::End && peek().line == line &&
           !isPunct(";"))
      ++position;
    if (isPunct(";"))
      ++position;
  }
  void skipStatement() {
    while (peek().kind != Token::Kind::End && !isPunct(";"))
      ++position;
    if (isPunct(";"))
      ++position;
  }

  bool parseModuleStatement();
  bool parseVariable(Space space, bool isExtern, Kernel *kernel);
  bool parseEntry();
  bool parseBody(Kernel &kernel);
  bool parseRegisters(Kernel &kernel);
  bool parseInstruction(Kernel &kernel);
  bool parseOperand(Kernel &kernel, Operand &operand);
  bool parseSimpleOperand(Kernel &kernel, Operand &operand);
  bool finishKernel(Kernel &kernel);

  std::vector<Token> tokens;
  size_t position = 0;
  Module &module;
  std::string failure;

  struct SharedDeclaration {
    uint32_t bytes = 0, alignment = 1;
    bool isExtern = false;
  };
  /// Module-level shared variables, laid out per kernel that uses them.
  std::unordered_map<std::string, SharedDeclaration> moduleShared;
  std::unordered_map<std::string, const GlobalVariable *> globalsByName;
  /// The bytes of the module's global variables so far.
  uint64_t globalBytes = 0;

  // Per kernel while its body is parsed.
  /// Registers and labels are scoped by the body's { } blocks, as PTX
  /// scopes them: an inline-assembly block that declares `.reg .pred P1` and
  /// a label `LAB_WAIT` may appear many times in one kernel. Scope 0 is the
  /// kernel's body; each block's scope names its parent.
  struct Scope {
    int parent = -1;
    std::unordered_map<std::string, int32_t> registers;
    std::unordered_map<std::string, uint32_t> labels;
  };
  std::vector<Scope> scopes;
  int scope = 0;
  /// The register NAME visible in the current scope, or -1.
  int32_t findRegister(const std::string &name) const {
    for (int at = scope; at >= 0; at = scopes[at].parent)
      if (auto it = scopes[at].registers.find(name);
          it != scopes[at].registers.end())
        return it->second;
    return -1;
  }
  /// The label NAME visible from scope FROM.
  const uint32_t *findLabel(int from, const std::string &name) const {
    for (int at = from; at >= 0; at = scopes[at].parent)
      if (auto it = scopes[at].labels.find(name); it != scopes[at].labels.end())
        return &it->second;
    return nullptr;
  }
  std::unordered_map<std::string, uint32_t> parameters;
  /// Symbols in operands resolved once the shared layout is known:
  /// (instruction, operand path) -> name.
  struct Fixup {
    size_t instruction;
    size_t operand;
    std::string name;
    bool isLabel;
    /// The scope the name appears in, which a label is looked up from.
    int scope = 0;
  };
  std::vector<Fixup> fixups;
  std::unordered_map<std::string, SharedDeclaration> kernelShared;
  std::unordered_map<std::string, SharedDeclaration> kernelLocal;
};

bool Parser::parse(std::string &error) {
  while (peek().kind != Token::Kind::End) {
    if (!parseModuleStatement()) {
      error = failure.empty() ? "line " + std::to_string(peek().line) +
                                    ": cannot parse '" + peek().text + "'"
                              : failure;
      return false;
    }
  }
  return true;
}

Type parseTypeWord(const std::string &word) {
  static const std::unordered_map<std::string, Type> types = {
      {".pred", Type::Pred}, {".b8", Type::B8},     {".b16", Type::B16},
      {".b32", Type::B32},   {".b64", Type::B64},   {".b128", Type::B128},
      {".u8", Type::U8},     {".u16", Type::U16},   {".u32", Type::U32},
      {".u64", Type::U64},   {".s8", Type::S8},     {".s16", Type::S16},
      {".s32", Type::S32},   {".s64", Type::S64},   {".f16", Type::F16},
      {".f16x2", Type::F16x2}, {".bf16", Type::BF16}, {".bf16x2", Type::BF16x2},
      {".f32", Type::F32},   {".f64", Type::F64}};
  auto it = types.find(word);
  return it == types.end() ? Type::None : it->second;
}

bool Parser::parseModuleStatement() {
  const Token &token = peek();
  if (token.kind != Token::Kind::Word)
    return fail("unexpected '" + token.text + "' at module level");
  const std::string &word = token.text;
  if (word == ".version") {
    next();
    // MAJOR.MINOR, one digit each in every PTX ISA so far; anything else
    // is refused rather than read into an overflowing number.
    Token version = next();
    const std::string &text = version.text;
    size_t dot = text.find('.');
    uint64_t major = 0, minor = 0;
    if (dot == std::string::npos || dot > 2 || text.size() - dot - 1 > 2 ||
        !parseInteger(text.substr(0, dot), major) ||
        !parseInteger(text.substr(dot + 1), minor))
      return fail("bad .version '" + text + "'");
    module.ptxVersion = static_cast<unsigned>(major * 10 + minor);
    return true;
  }
  if (word == ".target") {
    next();
    module.target = next().text;
    while (isPunct(",")) {
      next();
      next();
    }
    return true;
  }
  if (word == ".address_size") {
    next();
    Token size = next();
    if (size.text != "64")
      return fail("only .address_size 64 is supported, not " + size.text);
    return true;
  }
  if (isDebugDirective(word)) {
    skipLine();
    return true;
  }
  if (word == ".section") {
    while (peek().kind != Token::Kind::End && !isPunct("{"))
      ++position;
    int depth = 0;
    do {
      if (isPunct("{"))
        ++depth;
      else if (isPunct("}"))
        --depth;
      ++position;
    } while (depth > 0 && peek().kind != Token::Kind::End);
    return true;
  }
  bool isExtern = false;
  while (word == ".visible" || word == ".weak" || word == ".extern" ||
         word == ".common") {
    isExtern |= peek().text == ".extern";
    next();
    if (peek().kind != Token::Kind::Word)
      return fail("expected a declaration");
    if (peek().text != ".visible" && peek().text != ".weak" &&
        peek().text != ".extern" && peek().text != ".common")
      break;
  }
  const std::string &what = peek().text;
  if (what == ".entry")
    return parseEntry();
  if (what == ".func")
    return fail("device functions (.func) are not supported by the emulator");
  if (what == ".global" || what == ".shared" || what == ".const") {
    Space space = what == ".global"   ? Space::Global
                  : what == ".shared" ? Space::Shared
                                      : Space::Const;
    next();
    return parseVariable(space, isExtern, nullptr);
  }
  return fail("unsupported module-level directive '" + what + "'");
}

/// [.align N] .type name[N]...[ = {init} | = value ];
bool Parser::parseVariable(Space space, bool isExtern, Kernel *kernel) {
  uint32_t alignment = 0;
  Type type = Type::None;
  while (peek().kind == Token::Kind::Word && peek().text[0] == '.') {
    std::string word = next().text;
    if (word == ".align") {
      uint64_t value = 0;
      // A power of two, at most a page (PTX's are 1 to 1024 in practice).
      if (!parseInteger(next().text, value) || value == 0 ||
          (value & (value - 1)) != 0 || value > 4096)
        return fail("bad .align");
      alignment = static_cast<uint32_t>(value);
    } else if (word == ".v2" || word == ".v4") {
      return fail("vector variables are not supported");
    } else if ((type = parseTypeWord(word)) == Type::None) {
      return fail("unsupported variable qualifier '" + word + "'");
    }
  }
  if (type == Type::None)
    return fail("a variable without a type");
  if (peek().kind != Token::Kind::Word)
    return fail("expected a variable name");
  std::string name = next().text;
  uint64_t count = 1;
  bool unsized = false;
  while (isPunct("[")) {
    next();
    if (isPunct("]")) {
      unsized = true;
      next();
      continue;
    }
    uint64_t dimension = 0;
    if (!parseInteger(next().text, dimension))
      return fail("bad array size of " + name);
    // Checked against the space's limit below; kept from overflowing here.
    count = dimension != 0 && count > kVariableLimit / dimension
                ? kVariableLimit + 1
                : count * dimension;
    if (!expectPunct("]"))
      return false;
  }
  uint32_t elementBytes = typeBytes(type);
  if (alignment == 0)
    alignment = elementBytes;
  uint64_t bytes = unsized ? 0 : count * elementBytes;
  // What a GPU allows each space (a block's shared memory, a thread's local
  // memory, a constant bank), and for global variables the emulator's own
  // bound: it holds them in host memory.
  uint64_t limit = space == Space::Shared  ? kSharedLimit
                   : space == Space::Local ? kLocalLimit
                   : space == Space::Const ? kConstLimit
                                           : kVariableLimit;
  if (bytes > limit ||
      (space == Space::Global && globalBytes + bytes > kVariableLimit))
    return fail(std::string(spaceName(space)) + " variable " + name +
                " is larger than the " + std::to_string(limit) +
                " bytes the emulator allows " +
                (space == Space::Global ? "all global variables"
                                        : "one variable of its space"));
  if (space == Space::Global)
    globalBytes += bytes;
  if (space == Space::Shared || space == Space::Local) {
    if (isPunct("="))
      return fail("initialised " + std::string(spaceName(space)) +
                  " variables are not supported");
    SharedDeclaration declaration{static_cast<uint32_t>(bytes), alignment,
                                  unsized || isExtern};
    if (space == Space::Local)
      kernelLocal[name] = declaration;
    else if (kernel)
      kernelShared[name] = declaration;
    else
      moduleShared[name] = declaration;
    return expectPunct(";");
  }
  if (kernel)
    return fail("kernel-scope " + std::string(spaceName(space)) +
                " variables are not supported");
  auto variable = std::make_unique<GlobalVariable>();
  variable->name = name;
  variable->space = space;
  variable->alignment = alignment;
  variable->bytes.assign(bytes, 0);
  if (isPunct("=")) {
    next();
    bool braced = isPunct("{");
    if (braced)
      next();
    uint64_t index = 0;
    while (!isPunct(";") && !isPunct("}")) {
      bool negative = false;
      if (isPunct("-")) {
        negative = true;
        next();
      }
      Token value = next();
      uint64_t bits = 0;
      if (value.text.size() > 2 && value.text[0] == '0' &&
          (value.text[1] == 'f' || value.text[1] == 'F' ||
           value.text[1] == 'd' || value.text[1] == 'D')) {
        bits = std::strtoull(value.text.c_str() + 2, nullptr, 16);
      } else if (!parseInteger(value.text, bits)) {
        return fail("unsupported initialiser '" + value.text + "' of " + name);
      }
      if (negative)
        bits = ~bits + 1;
      if ((index + 1) * elementBytes > variable->bytes.size())
        return fail("too many initialisers for " + name);
      std::memcpy(variable->bytes.data() + index * elementBytes, &bits,
                  elementBytes);
      ++index;
      if (isPunct(","))
        next();
    }
    if (braced && !expectPunct("}"))
      return false;
  }
  if (variable->bytes.empty())
    variable->bytes.resize(1); // a valid address for an unsized extern
  globalsByName[name] = variable.get();
  module.globals.push_back(std::move(variable));
  return expectPunct(";");
}

bool Parser::parseEntry() {
  next(); // .entry
  auto kernel = std::make_unique<Kernel>();
  if (peek().kind != Token::Kind::Word)
    return fail("expected a kernel name");
  kernel->name = next().text;
  scopes.assign(1, Scope());
  scope = 0;
  parameters.clear();
  fixups.clear();
  kernelShared.clear();
  kernelLocal.clear();
  if (isPunct("(")) {
    next();
    while (!isPunct(")")) {
      if (!isWord(".param"))
        return fail("expected .param in the parameters of " + kernel->name);
      next();
      uint32_t alignment = 0;
      Type type = Type::None;
      while (peek().kind == Token::Kind::Word && peek().text[0] == '.') {
        std::string word = next().text;
        if (word == ".align") {
          uint64_t value = 0;
          parseInteger(next().text, value);
          alignment = static_cast<uint32_t>(value);
        } else if (word == ".ptr" || word == ".global" || word == ".shared" ||
                   word == ".const" || word == ".local") {
          continue; // pointer attributes: no effect on the bytes
        } else if ((type = parseTypeWord(word)) == Type::None) {
          return fail("unsupported parameter qualifier '" + word + "'");
        }
      }
      if (type == Type::None)
        return fail("a parameter without a type");
      std::string name = next().text;
      uint64_t count = 1;
      if (isPunct("[")) {
        next();
        if (!parseInteger(next().text, count) || !expectPunct("]"))
          return fail("bad parameter array size of " + name);
      }
      uint32_t bytes = static_cast<uint32_t>(count * typeBytes(type));
      if (alignment == 0)
        alignment = typeBytes(type);
      uint32_t offset =
          (kernel->parameterBytes + alignment - 1) / alignment * alignment;
      kernel->parameters.push_back({name, offset, bytes});
      parameters[name] = offset;
      kernel->parameterBytes = offset + bytes;
      if (isPunct(","))
        next();
    }
    next(); // )
  }
  // Performance directives before the body.
  while (peek().kind == Token::Kind::Word) {
    std::string word = next().text;
    uint32_t values[3] = {1, 1, 1};
    int count = 0;
    do {
      if (count > 0)
        next(); // ,
      uint64_t value = 0;
      if (!parseInteger(next().text, value))
        return fail("bad value of " + word);
      if (count < 3)
        values[count] = static_cast<uint32_t>(value);
      ++count;
    } while (isPunct(","));
    if (word == ".maxntid")
      std::copy(values, values + 3, kernel->maxntid);
    else if (word == ".reqntid")
      std::copy(values, values + 3, kernel->reqntid);
    else if (word == ".minnctapersm")
      kernel->minnctapersm = values[0];
    else if (word == ".maxnreg")
      kernel->maxnreg = values[0];
    else if (word != ".maxnctapersm" && word != ".maxclusterrank" &&
             word != ".reqnctapercluster" && word != ".explicitcluster")
      return fail("unsupported kernel directive '" + word + "'");
  }
  if (!expectPunct("{") || !parseBody(*kernel) || !finishKernel(*kernel))
    return false;
  module.kernels.push_back(std::move(kernel));
  return true;
}

bool Parser::parseRegisters(Kernel &kernel) {
  next(); // .reg
  Type type = Type::None;
  while (peek().kind == Token::Kind::Word && peek().text[0] == '.') {
    std::string word = next().text;
    if (word == ".v2" || word == ".v4")
      return fail("vector registers are not supported");
    if ((type = parseTypeWord(word)) == Type::None)
      return fail("unsupported register type '" + word + "'");
  }
  do {
    if (isPunct(","))
      next();
    if (peek().kind != Token::Kind::Word)
      return fail("expected a register name");
    std::string name = next().text;
    if (kernel.registerNames.size() + (isPunct("<") ? 0 : 1) > kRegisterLimit)
      return fail("more than " + std::to_string(kRegisterLimit) +
                  " registers in " + kernel.name);
    auto declare = [&](const std::string &full) {
      auto &registers = scopes[scope].registers;
      if (!registers.count(full)) {
        registers[full] = static_cast<int32_t>(kernel.registerNames.size());
        kernel.registerNames.push_back(full);
      }
    };
    if (isPunct("<")) {
      next();
      uint64_t count = 0;
      if (!parseInteger(next().text, count) || !expectPunct(">"))
        return fail("bad register range " + name);
      if (count > kRegisterLimit - kernel.registerNames.size())
        return fail("more than " + std::to_string(kRegisterLimit) +
                    " registers in " + kernel.name);
      for (uint64_t i = 0; i < count; ++i)
        declare(name + std::to_string(i));
    } else {
      declare(name);
    }
  } while (isPunct(","));
  return expectPunct(";");
}

bool Parser::parseBody(Kernel &kernel) {
  int depth = 1;
  while (depth > 0) {
    const Token &token = peek();
    if (token.kind == Token::Kind::End)
      return fail("unterminated body of " + kernel.name);
    if (isPunct("{")) {
      next();
      ++depth;
      scopes.push_back(Scope{scope, {}, {}});
      scope = static_cast<int>(scopes.size()) - 1;
      continue;
    }
    if (isPunct("}")) {
      next();
      --depth;
      if (depth > 0)
        scope = scopes[scope].parent;
      continue;
    }
    if (token.kind == Token::Kind::Word && isPunct(":", 1)) {
      if (!scopes[scope]
               .labels
               .emplace(token.text, static_cast<uint32_t>(kernel.code.size()))
               .second)
        return fail("label " + token.text + " defined twice in one scope");
      position += 2;
      continue;
    }
    if (token.kind == Token::Kind::Word && token.text[0] == '.') {
      if (token.text == ".reg") {
        if (!parseRegisters(kernel))
          return false;
      } else if (token.text == ".shared" || token.text == ".local") {
        Space space = token.text == ".shared" ? Space::Shared : Space::Local;
        next();
        if (!parseVariable(space, false, &kernel))
          return false;
      } else if (isDebugDirective(token.text)) {
        skipLine();
      } else {
        return fail("unsupported directive '" + token.text + "' in " +
                    kernel.name);
      }
      continue;
    }
    if (!parseInstruction(kernel))
      return false;
  }
  return true;
}

bool Parser::parseSimpleOperand(Kernel &kernel, Operand &operand) {
  if (isPunct("!")) {
    next();
    operand.negated = true;
  }
  bool negative = false;
  if (isPunct("-")) {
    next();
    negative = true;
  }
  Token token = next();
  if (token.kind == Token::Kind::Number) {
    operand.kind = Operand::Kind::Immediate;
    const std::string &t = token.text;
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'f' || t[1] == 'F')) {
      operand.value = std::strtoull(t.c_str() + 2, nullptr, 16);
      operand.isF32Literal = true;
      if (negative)
        operand.value ^= 0x80000000u;
    } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'd' || t[1] == 'D')) {
      operand.value = std::strtoull(t.c_str() + 2, nullptr, 16);
      operand.isF64Literal = true;
      if (negative)
        operand.value ^= 0x8000000000000000ull;
    } else {
      if (!parseInteger(t, operand.value))
        return fail("bad number '" + t + "'");
      if (negative)
        operand.value = ~operand.value + 1;
    }
    return true;
  }
  if (negative)
    return fail("'-' before '" + token.text + "'");
  if (token.kind != Token::Kind::Word)
    return fail("unexpected '" + token.text + "' in an operand");
  const std::string &t = token.text;
  if (t == "_") {
    operand.kind = Operand::Kind::Sink;
    return true;
  }
  if (int32_t slot = findRegister(t); slot >= 0) {
    operand.kind = Operand::Kind::Register;
    operand.reg = slot;
    return true;
  }
  if (t[0] == '%') {
    static const std::unordered_map<std::string, SpecialRegister> specials = {
        {"%tid.x", SpecialRegister::TidX},
        {"%tid.y", SpecialRegister::TidY},
        {"%tid.z", SpecialRegister::TidZ},
        {"%ntid.x", SpecialRegister::NtidX},
        {"%ntid.y", SpecialRegister::NtidY},
        {"%ntid.z", SpecialRegister::NtidZ},
        {"%ctaid.x", SpecialRegister::CtaidX},
        {"%ctaid.y", SpecialRegister::CtaidY},
        {"%ctaid.z", SpecialRegister::CtaidZ},
        {"%nctaid.x", SpecialRegister::NctaidX},
        {"%nctaid.y", SpecialRegister::NctaidY},
        {"%nctaid.z", SpecialRegister::NctaidZ},
        {"%laneid", SpecialRegister::LaneId},
        {"%warpid", SpecialRegister::WarpId},
        {"%nwarpid", SpecialRegister::NwarpId},
        {"%smid", SpecialRegister::SmId},
        {"%nsmid", SpecialRegister::NsmId},
        {"%clock", SpecialRegister::Clock},
        {"%clock64", SpecialRegister::Clock64},
        {"%globaltimer", SpecialRegister::GlobalTimer},
        {"%dynamic_smem_size", SpecialRegister::DynamicSmemSize},
        {"%total_smem_size", SpecialRegister::TotalSmemSize},
        {"%lanemask_eq", SpecialRegister::LanemaskEq},
        {"%lanemask_lt", SpecialRegister::LanemaskLt},
        {"%lanemask_le", SpecialRegister::LanemaskLe},
        {"%lanemask_gt", SpecialRegister::LanemaskGt},
        {"%lanemask_ge", SpecialRegister::LanemaskGe}};
    auto special = specials.find(t);
    if (special == specials.end())
      return fail("undeclared register " + t);
    operand.kind = Operand::Kind::Special;
    operand.special = special->second;
    return true;
  }
  // A label or a variable's name: resolved when the kernel ends.
  operand.kind = Operand::Kind::Label;
  fixups.push_back({kernel.code.size(), 0, t, true, scope});
  return true;
}

bool Parser::parseOperand(Kernel &kernel, Operand &operand) {
  if (isPunct("{")) {
    next();
    operand.kind = Operand::Kind::Vector;
    while (!isPunct("}")) {
      Operand element;
      if (!parseSimpleOperand(kernel, element))
        return false;
      if (element.kind == Operand::Kind::Label)
        return fail("a name inside a vector operand");
      operand.elements.push_back(element);
      if (isPunct(","))
        next();
      else if (!isPunct("}"))
        return fail("expected ',' or '}' in a vector operand");
    }
    next();
    return true;
  }
  if (isPunct("[")) {
    next();
    operand.kind = Operand::Kind::Address;
    Token base = next();
    if (base.kind == Token::Kind::Number) {
      if (!parseInteger(base.text, operand.value))
        return fail("bad address '" + base.text + "'");
    } else if (base.kind == Token::Kind::Word && findRegister(base.text) >= 0) {
      operand.reg = findRegister(base.text);
    } else if (base.kind == Token::Kind::Word) {
      auto parameter = parameters.find(base.text);
      if (parameter != parameters.end()) {
        operand.isParam = true;
        operand.value = parameter->second;
      } else {
        fixups.push_back({kernel.code.size(), 0, base.text, false, scope});
      }
    } else {
      return fail("bad address base '" + base.text + "'");
    }
    if (isPunct("+")) {
      next();
      bool negative = false;
      if (isPunct("-")) {
        next();
        negative = true;
      }
      uint64_t offset = 0;
      if (!parseInteger(next().text, offset))
        return fail("bad address offset");
      operand.value += negative ? ~offset + 1 : offset;
    }
    // A tensor copy's [tensorMap, {c0, c1, ...}]: the coordinates.
    if (isPunct(",")) {
      next();
      Operand coordinates;
      if (!isPunct("{") || !parseOperand(kernel, coordinates))
        return fail("expected the coordinates of a tensor address");
      operand.elements = std::move(coordinates.elements);
    }
    return expectPunct("]");
  }
  return parseSimpleOperand(kernel, operand);
}

bool Parser::parseInstruction(Kernel &kernel) {
  Instruction instruction;
  instruction.line = peek().line;
  size_t start = position;
  if (isPunct("@")) {
    next();
    if (isPunct("!")) {
      next();
      instruction.guardNegated = true;
    }
    Token guard = next();
    instruction.guard = findRegister(guard.text);
    if (instruction.guard < 0)
      return fail("undeclared guard predicate " + guard.text);
  }
  if (peek().kind != Token::Kind::Word)
    return fail("expected an instruction, found '" + peek().text + "'");
  std::string opcodeWord = next().text;
  while (!isPunct(";")) {
    if (peek().kind == Token::Kind::End)
      return fail("unterminated instruction " + opcodeWord);
    Operand operand;
    size_t fixupsAt = fixups.size();
    if (!parseOperand(kernel, operand))
      return false;
    for (size_t f = fixupsAt; f < fixups.size(); ++f)
      fixups[f].operand = instruction.operands.size();
    instruction.operands.push_back(std::move(operand));
    // setp's two destinations p|q.
    if (isPunct("|")) {
      next();
      continue;
    }
    if (isPunct(","))
      next();
    else if (!isPunct(";"))
      return fail("expected ',' in " + opcodeWord + ", found '" + peek().text +
                  "'");
  }
  next(); // ;
  for (size_t i = start; i < position; ++i) {
    if (!instruction.text.empty() && tokens[i].text != "," &&
        tokens[i].text != ";" && tokens[i].text != "]" &&
        tokens[i].text != "}" && instruction.text.back() != '[' &&
        instruction.text.back() != '{' && instruction.text.back() != '@' &&
        instruction.text.back() != '!' && instruction.text.back() != '+' &&
        instruction.text.back() != '-' &&
        tokens[i].text != "+" && tokens[i].text != "|")
      instruction.text += ' ';
    instruction.text += tokens[i].text;
  }
  std::string error;
  if (!decodeInstruction(opcodeWord, instruction, error))
    return fail(error + " (" + instruction.text + ")");
  kernel.code.push_back(std::move(instruction));
  return true;
}

bool Parser::finishKernel(Kernel &kernel) {
  // The shared layout: the kernel's variables and the module's it uses,
  // each aligned, then the dynamic (extern, unsized) part.
  std::unordered_map<std::string, uint32_t> sharedOffsets;
  uint32_t dynamicAlignment = 16;
  std::vector<std::string> dynamicNames;
  bool tooMuchShared = false;
  auto place = [&](const std::string &name, const SharedDeclaration &d) {
    if (sharedOffsets.count(name))
      return;
    if (d.isExtern && d.bytes == 0) {
      dynamicAlignment = std::max(dynamicAlignment, d.alignment);
      dynamicNames.push_back(name);
      sharedOffsets[name] = 0;
      return;
    }
    uint32_t offset = (kernel.staticSharedBytes + d.alignment - 1) /
                      d.alignment * d.alignment;
    sharedOffsets[name] = offset;
    kernel.sharedVariables.push_back({name, offset, d.bytes, false});
    kernel.staticSharedBytes = offset + d.bytes;
    tooMuchShared = tooMuchShared || kernel.staticSharedBytes > kSharedLimit;
  };
  for (auto &[name, d] : kernelShared)
    place(name, d);
  for (const Fixup &fixup : fixups)
    if (!fixup.isLabel || !findLabel(fixup.scope, fixup.name))
      if (auto it = moduleShared.find(fixup.name); it != moduleShared.end() &&
                                                   !kernelShared.count(fixup.name))
        place(fixup.name, it->second);
  if (tooMuchShared) {
    failure = kernel.name + "'s shared variables take more than the " +
              std::to_string(kSharedLimit) + " bytes a block can have";
    return false;
  }
  kernel.dynamicSharedOffset =
      (kernel.staticSharedBytes + dynamicAlignment - 1) / dynamicAlignment *
      dynamicAlignment;
  for (const std::string &name : dynamicNames) {
    sharedOffsets[name] = kernel.dynamicSharedOffset;
    kernel.sharedVariables.push_back(
        {name, kernel.dynamicSharedOffset, 0, true});
  }
  // Local variables: offsets in each thread's local window.
  std::unordered_map<std::string, uint32_t> localOffsets;
  uint32_t localBytes = 0;
  for (auto &[name, d] : kernelLocal) {
    localBytes = (localBytes + d.alignment - 1) / d.alignment * d.alignment;
    localOffsets[name] = localBytes;
    localBytes += d.bytes;
  }
  if (localBytes > kLocalLimit) {
    failure = kernel.name + "'s local variables take " +
              std::to_string(localBytes) + " bytes a thread, past the " +
              std::to_string(kLocalLimit) + " a GPU allows";
    return false;
  }
  kernel.localBytes = localBytes;

  for (const Fixup &fixup : fixups) {
    Instruction &instruction = kernel.code[fixup.instruction];
    Operand &operand = instruction.operands[fixup.operand];
    uint64_t address = 0;
    Space space = Space::Generic;
    if (const uint32_t *label = findLabel(fixup.scope, fixup.name);
        fixup.isLabel && label) {
      operand.value = *label;
      continue;
    }
    if (auto it = sharedOffsets.find(fixup.name); it != sharedOffsets.end()) {
      address = it->second;
      space = Space::Shared;
    } else if (auto it = localOffsets.find(fixup.name);
               it != localOffsets.end()) {
      address = it->second;
      space = Space::Local;
    } else if (auto it = globalsByName.find(fixup.name);
               it != globalsByName.end()) {
      address = reinterpret_cast<uintptr_t>(it->second->bytes.data());
      space = it->second->space;
    } else if (auto it = parameters.find(fixup.name);
               it != parameters.end()) {
      address = it->second;
      space = Space::Param;
    } else {
      failure = "line " + std::to_string(instruction.line) +
                ": undefined name '" + fixup.name + "' in " + kernel.name;
      return false;
    }
    if (operand.kind == Operand::Kind::Label) {
      // A variable's address as a value (mov.u64 %rd, name).
      operand.kind = Operand::Kind::Immediate;
      operand.value = address;
      operand.symbolSpace = space;
    } else {
      operand.value += address;
      operand.symbolSpace = space;
      operand.isParam = space == Space::Param;
    }
  }
  for (Instruction &instruction : kernel.code) {
    if (instruction.op != Opcode::Bra)
      continue;
    const Operand &target = instruction.operands[0];
    if (target.kind != Operand::Kind::Label) {
      failure = "line " + std::to_string(instruction.line) +
                ": a branch to something that is not a label";
      return false;
    }
  }
  std::string error;
  if (!validateKernel(kernel, error)) {
    failure = error;
    return false;
  }
  return true;
}

} // namespace

const Kernel *Module::findKernel(std::string_view name) const {
  for (const auto &kernel : kernels)
    if (kernel->name == name)
      return kernel.get();
  return nullptr;
}

std::unique_ptr<Module> attn::ptxemu::parseModule(std::string_view ptx,
                                                  std::string &error) {
  std::vector<Token> tokens;
  if (!tokenize(ptx, tokens, error))
    return nullptr;
  auto module = std::make_unique<Module>();
  Parser parser(std::move(tokens), *module);
  if (!parser.parse(error))
    return nullptr;
  return module;
}
