#include "fabric/net_reader.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/format.hpp"

namespace softib::fabric {

namespace {

constexpr int kMaxIncludeDepth = 9;
constexpr size_t kMaxIdLength = 64;
constexpr size_t kNodeDescriptionLength = 64;

struct Location {
  uint32_t file = 0;
  uint32_t line = 0;
};

// One "[p] "remote"[rp]" line, kept until every node is known.
struct PortDecl {
  PortRef here;
  std::string remote;  // node id, or an alias reference when remote_is_alias
  uint8_t remote_port = 1;
  bool remote_is_alias = false;
  Location at;
};

struct AliasDecl {
  PortRef port;
  Location at;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// strtoull semantics (base 0: 0x hex, leading 0 octal, else decimal; a leading '+' allowed),
// as ibsim reads its numbers. Returns nullopt when no digit was read.
std::optional<uint64_t> parse_number(std::string_view s, int base = 0, size_t* used = nullptr) {
  char buf[40] = {};
  const size_t n = std::min(s.size(), sizeof buf - 1);
  s.copy(buf, n);
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(buf, &end, base);
  if (end == buf || errno == ERANGE) return std::nullopt;
  if (used) *used = static_cast<size_t>(end - buf);
  return v;
}

// The text between the first pair of double quotes, and what follows the closing quote.
std::optional<std::string_view> quoted(std::string_view s, std::string_view* rest = nullptr) {
  const size_t open = s.find('"');
  if (open == std::string_view::npos) return std::nullopt;
  const size_t close = s.find('"', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  if (rest) *rest = s.substr(close + 1);
  return s.substr(open + 1, close - open - 1);
}

bool keyword(std::string_view line, std::string_view word) {
  if (!line.starts_with(word)) return false;
  if (line.size() == word.size()) return true;
  const auto next = static_cast<unsigned char>(line[word.size()]);
  return std::isspace(next) || std::isdigit(next);
}

class Parser {
 public:
  explicit Parser(const NetReadOptions& options) : options_(options) {}

  Result<void> parse_file(const std::string& path, int depth) {
    auto text = read_file(path, "net file");
    if (!text) return text.error();
    return parse_text(*text, path, depth);
  }

  Result<void> parse_text(std::string_view text, std::string_view name, int depth) {
    if (depth > kMaxIncludeDepth)
      return Status(Code::kParseError, fmt::format("{}: includes nested deeper than {}", name, kMaxIncludeDepth));
    files_.emplace_back(name);
    const auto file = static_cast<uint32_t>(files_.size() - 1);
    uint32_t line_no = 0;
    std::optional<NodeIndex> record;  // the node whose port lines we are reading
    while (!text.empty()) {
      const size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      const Location at{file, line_no};

      if (record) {
        if (line.starts_with('#')) continue;  // comments do not end a record
        if (line.starts_with('[') || line.starts_with('@')) {
          SOFTIB_TRY(parse_port_line(line, *record, at));
          continue;
        }
        record.reset();  // anything else ends the record and is read as a top-level line
      }
      if (line.starts_with('[') || line.starts_with('@'))
        return error(at, "port line outside a node record (a blank line inside a record?)");

      if (keyword(line, "Switch")) {
        auto n = parse_header(line, NodeType::kSwitch, 6, at);
        if (!n) return Err{n.error()};
        record = *n;
      } else if (keyword(line, "Hca") || keyword(line, "Ca")) {
        auto n = parse_header(line, NodeType::kCa, line.starts_with("Hca") ? 3 : 2, at);
        if (!n) return Err{n.error()};
        record = *n;
      } else if (keyword(line, "Rt")) {
        auto n = parse_header(line, NodeType::kRouter, 2, at);
        if (!n) return Err{n.error()};
        record = *n;
      } else if (line.starts_with("switchguid")) {
        SOFTIB_TRY(parse_guid_base(line, NodeType::kSwitch, at));
      } else if (line.starts_with("hcaguids") || line.starts_with("caguid")) {
        SOFTIB_TRY(parse_guid_base(line, NodeType::kCa, at));
      } else if (line.starts_with("rtguid")) {
        SOFTIB_TRY(parse_guid_base(line, NodeType::kRouter, at));
      } else if (line.starts_with("vendid")) {
        auto v = assignment(line, at, 0xFFFFFF);
        if (!v) return Err{v.error()};
        vendor_id_ = static_cast<uint32_t>(*v);
      } else if (line.starts_with("devid")) {
        auto v = assignment(line, at, 0xFFFF);
        if (!v) return Err{v.error()};
        device_id_ = static_cast<uint16_t>(*v);
      } else if (line.starts_with("sysimgguid")) {
        auto v = assignment(line, at, ~uint64_t{0});
        if (!v) return Err{v.error()};
        system_image_guid_ = Guid(*v);
      } else if (line.starts_with("width")) {
        auto v = assignment(line, at, 31);
        if (!v) return Err{v.error()};
        if (*v == 0) return error(at, "width must be 1..31 (1=1x 2=4x 4=8x 8=12x 16=2x)");
        default_caps_.width_enabled = static_cast<uint8_t>(*v);
      } else if (line.starts_with("speed")) {
        auto v = assignment(line, at, 7);
        if (!v) return Err{v.error()};
        if (*v == 0) return error(at, "speed must be 1..7 (1=SDR 2=DDR 4=QDR)");
        default_caps_.speed_enabled = static_cast<uint8_t>(*v);
      } else if (line.starts_with("extspeed")) {
        auto v = assignment(line, at, 15);
        if (!v) return Err{v.error()};
        default_caps_.ext_speed_enabled = static_cast<uint8_t>(*v);
      } else if (line.starts_with("module")) {
        auto prefix = quoted(line);
        if (!prefix || prefix->size() > 20)
          return error(at, "module wants a quoted prefix of at most 20 characters");
        module_ = std::string(*prefix);
      } else if (line.starts_with("include")) {
        if (!options_.allow_includes) return error(at, "include is not allowed here");
        auto inc = quoted(line);
        if (!inc) return error(at, "include wants a quoted file name");
        SOFTIB_TRY(parse_include(std::string(*inc), name, depth, at));
      } else if (keyword(line, "do")) {
        warn(at, "ibsim console command ignored");
      }
      // Anything else (comments, blank lines, pdebug=...) is ignored, as ibsim does.
    }
    return {};
  }

  Result<void> resolve() {
    for (const PortDecl& d : decls_) {
      auto remote = resolve_remote(d);
      if (!remote) return Err{remote.error()};
      const PortRef there = *remote;
      const TopoNode& here_node = topo_.node(d.here.node);
      const PortDecl* back = declaration(there);
      if (!d.remote_is_alias) {
        // Both ends must name each other.
        if (back == nullptr) {
          return error(d.at, fmt::format("\"{}\"[{}] is cabled to \"{}\"[{}], which does not list "
                                         "the cable back",
                                         here_node.id, d.here.port, topo_.node(there.node).id,
                                         there.port));
        }
        if (back->remote_is_alias) continue;  // the alias side makes the connection
        auto back_target = resolve_remote(*back);
        if (!back_target) return Err{back_target.error()};
        if (!(*back_target == d.here)) {
          return error(d.at, fmt::format("\"{}\"[{}] is cabled to \"{}\"[{}], but that port is "
                                         "cabled to \"{}\"[{}] (line {})",
                                         here_node.id, d.here.port, topo_.node(there.node).id,
                                         there.port, topo_.node(back_target->node).id,
                                         back_target->port, back->at.line));
        }
      } else if (back != nullptr) {
        return error(d.at, fmt::format("alias \"{}\" names a port that is already cabled (line {})",
                                       d.remote, back->at.line));
      }
      if (topo_.port(d.here).peer.valid()) continue;  // the other side already connected it
      auto c = topo_.connect(d.here, there);
      if (!c) return error(d.at, c.error().message());
    }
    return {};
  }

  NetFile take() { return NetFile{std::move(topo_), std::move(warnings_)}; }

 private:
  Status error(Location at, std::string_view reason) const {
    return Status(Code::kParseError, fmt::format("{}:{}: {}", files_[at.file], at.line, reason));
  }
  void warn(Location at, std::string_view text) {
    warnings_.push_back(fmt::format("{}:{}: {}", files_[at.file], at.line, text));
  }

  size_t slot(PortRef p) const { return topo_.node(p.node).first_port + p.port; }
  const PortDecl* declaration(PortRef p) const {
    const uint32_t i = decl_of_slot_[slot(p)];
    return i == 0 ? nullptr : &decls_[i - 1];
  }

  std::string with_module(std::string_view id) const {
    if (module_.empty() || id.find('#') != std::string_view::npos) return std::string(id);
    return module_ + "#" + std::string(id);
  }

  Result<uint64_t> assignment(std::string_view line, Location at, uint64_t max) {
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return error(at, "bad assignment: missing '='");
    auto v = parse_number(trim(line.substr(eq + 1)));
    if (!v) return error(at, "bad assignment: no number after '='");
    if (*v > max) return error(at, fmt::format("value {:#x} too large (max {:#x})", *v, max));
    return *v;
  }

  Result<void> parse_guid_base(std::string_view line, NodeType type, Location at) {
    const size_t op = line.find_first_of("=+");
    if (op == std::string_view::npos) return error(at, "bad GUID assignment: missing '=' or '+'");
    size_t used = 0;
    std::string_view value = trim(line.substr(op + 1));
    auto v = parse_number(value, 0, &used);
    if (!v) return error(at, "bad GUID assignment: no number");
    GuidCounter& c = counters_[static_cast<size_t>(type)];
    if (line[op] == '+') {
      c.next = c.base + *v;
    } else {
      c.base = c.next = *v;
    }
    // ibnetdiscover writes "switchguid=0x<node>(<port guid>)": honour the port GUID.
    value.remove_prefix(used);
    if (value.starts_with('(')) {
      auto port_guid = parse_number(value.substr(1), 16);
      if (!port_guid) return error(at, "bad port GUID in parentheses");
      next_port0_guid_ = Guid(*port_guid);
    }
    return {};
  }

  Result<void> parse_include(const std::string& file, std::string_view including, int depth,
                             Location at) {
    namespace fs = std::filesystem;
    fs::path path(file);
    if (path.is_relative()) {
      const fs::path beside = fs::path(std::string(including)).parent_path() / path;
      if (fs::exists(beside)) path = beside;
    }
    auto r = parse_file(path.string(), depth + 1);
    if (!r && r.error().code() == Code::kNotFound) return error(at, r.error().message());
    return r;
  }

  Result<NodeIndex> parse_header(std::string_view line, NodeType type, size_t keyword_len,
                                 Location at) {
    std::string_view rest = trim(line.substr(keyword_len));
    size_t used = 0;
    auto ports = parse_number(rest, 10, &used);
    if (!ports || *ports == 0) return error(at, "expected a port count after the node type");
    if (*ports > kMaxPorts) return error(at, fmt::format("{} ports: at most {}", *ports, kMaxPorts));
    rest.remove_prefix(used);
    std::string_view after_id;
    auto id = quoted(rest, &after_id);
    if (!id || id->empty()) return error(at, "expected a quoted node id");
    if (id->find_first_of("#@") != std::string_view::npos)
      return error(at, fmt::format("node id \"{}\": '#' and '@' are reserved", *id));
    if (id->size() > kMaxIdLength)
      return error(at, fmt::format("node id longer than {} characters", kMaxIdLength));
    const std::string full_id = with_module(*id);
    if (topo_.find(full_id)) return error(at, fmt::format("node id \"{}\" already exists", full_id));

    // "# "description" enhanced port 0 lid 3 lmc 0", or an unquoted description.
    std::string description;
    std::string_view tail;
    if (const size_t hash = after_id.find('#'); hash != std::string_view::npos) {
      std::string_view d = trim(after_id.substr(hash + 1));
      if (d.starts_with('"')) {
        auto q = quoted(d, &tail);
        if (!q) return error(at, "unterminated quoted node description");
        description = std::string(*q);
      } else {
        size_t end = d.size();
        for (std::string_view stop : {" enhanced port ", " base port ", " lid ", " lmc "})
          end = std::min(end, d.find(stop));
        description = std::string(trim(d.substr(0, end)));
        tail = d.substr(end);
      }
    }
    if (description.size() > kNodeDescriptionLength) {
      warn(at, fmt::format("node description truncated to {} bytes", kNodeDescriptionLength));
      description.resize(kNodeDescriptionLength);
    }

    GuidCounter& counter = counters_[static_cast<size_t>(type)];
    const Guid guid(counter.next);
    if (!options_.allow_duplicate_guids) {
      if (auto other = topo_.find_by_guid(guid))
        return error(at, fmt::format("node GUID {} is already used by \"{}\" (use "
                                     "allow_duplicate_guids to load such fabrics)",
                                     guid, topo_.node(*other).id));
    }
    auto n = topo_.add_node(type, full_id, std::move(description), guid,
                            static_cast<uint8_t>(*ports));
    if (!n) return error(at, n.error().message());
    TopoNode& node = topo_.node(*n);
    node.vendor_id = vendor_id_;
    node.device_id = device_id_;
    node.system_image_guid = system_image_guid_.value() ? system_image_guid_ : guid;
    counter.next += type == NodeType::kSwitch ? 1 : *ports + 1;
    vendor_id_ = 0;  // vendid and sysimgguid apply to the next node only; devid is sticky
    system_image_guid_ = Guid(0);
    for (uint8_t p = 0; p <= node.num_ports; ++p) topo_.port({*n, p}).caps = default_caps_;
    if (type == NodeType::kSwitch) {
      if (next_port0_guid_.value()) {
        topo_.port({*n, 0}).guid = next_port0_guid_;
        for (uint8_t p = 1; p <= node.num_ports; ++p) topo_.port({*n, p}).guid = next_port0_guid_;
      }
      if (tail.find("enhanced port 0") != std::string_view::npos) node.enhanced_port0 = true;
      if (auto lid = keyed_number(tail, "lid ")) {
        if (*lid > Lid::kMaxUnicast) return error(at, fmt::format("lid {} is not a unicast LID", *lid));
        topo_.port({*n, 0}).lid = Lid(static_cast<uint16_t>(*lid));
      }
      if (auto lmc = keyed_number(tail, "lmc ")) {
        if (*lmc > 7) return error(at, fmt::format("lmc {} out of range 0..7", *lmc));
        topo_.port({*n, 0}).lmc = static_cast<uint8_t>(*lmc);
      }
    }
    next_port0_guid_ = Guid(0);
    decl_of_slot_.resize(topo_.nodes().back().first_port + node.num_ports + 1, 0);
    return *n;
  }

  static std::optional<uint64_t> keyed_number(std::string_view s, std::string_view key) {
    const size_t at = s.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    return parse_number(s.substr(at + key.size()));
  }

  Result<void> parse_port_line(std::string_view line, NodeIndex node_index, Location at) {
    const bool alias_definition = line.starts_with('@');
    if (alias_definition) line.remove_prefix(1);
    const TopoNode& node = topo_.node(node_index);
    // [p]
    size_t used = 0;
    auto p = line.starts_with('[') ? parse_number(line.substr(1), 10, &used) : std::nullopt;
    if (!p || line.size() < used + 2 || line[used + 1] != ']')
      return error(at, "expected a port number in brackets");
    if (*p == 0 || *p > node.num_ports)
      return error(at, fmt::format("port {} out of range: \"{}\" has ports 1..{}", *p, node.id,
                                   node.num_ports));
    const PortRef here{node_index, static_cast<uint8_t>(*p)};
    std::string_view rest = line.substr(used + 2);
    // [p](portguid): ibnetdiscover writes a CA port's own GUID here.
    if (rest.starts_with('(')) {
      auto g = parse_number(rest.substr(1), 16, &used);
      if (!g || rest.size() <= used + 1 || rest[used + 1] != ')')
        return error(at, "bad port GUID in parentheses");
      if (node.type != NodeType::kSwitch) topo_.port(here).guid = Guid(*g);
      rest.remove_prefix(used + 2);
    }
    std::string_view after;
    auto remote = quoted(rest, &after);
    if (!remote || remote->empty()) return error(at, "expected a quoted remote node id or alias");

    if (alias_definition) {
      const std::string name = alias_name(*remote);
      if (aliases_.contains(name)) return error(at, fmt::format("alias \"{}\" already defined", name));
      aliases_.emplace(name, AliasDecl{here, at});
      return parse_options(after, here, at);
    }
    if (const PortDecl* first = declaration(here))
      return error(at, fmt::format("port {} of \"{}\" listed twice (first at line {})", *p,
                                   node.id, first->at.line));

    PortDecl d;
    d.here = here;
    d.at = at;
    d.remote_is_alias = remote->find('@') != std::string_view::npos;
    d.remote = d.remote_is_alias ? alias_name(*remote) : with_module(*remote);
    // [rp] (default 1) and "(remote port guid)".
    if (after.starts_with('[')) {
      auto rp = parse_number(after.substr(1), 10, &used);
      if (!rp || after.size() < used + 2 || after[used + 1] != ']')
        return error(at, "expected a remote port number in brackets");
      if (*rp == 0 || *rp > kMaxPorts) return error(at, fmt::format("invalid remote port {}", *rp));
      d.remote_port = static_cast<uint8_t>(*rp);
      after.remove_prefix(used + 2);
      if (after.starts_with('(')) {
        auto g = parse_number(after.substr(1), 16, &used);
        if (!g) return error(at, "bad remote port GUID in parentheses");
        remote_guids_.push_back({static_cast<uint32_t>(decls_.size()), Guid(*g)});
        after.remove_prefix(std::min(after.size(), used + 2));
      }
    }
    SOFTIB_TRY(parse_options(after, here, at));
    decls_.push_back(std::move(d));
    decl_of_slot_[slot(here)] = static_cast<uint32_t>(decls_.size());
    return {};
  }

  // w=, s=, e= before the comment; then, in the comment, a CA port's own "lid N lmc M" and
  // the "lid N <W>x<SPEED>" annotation of the link.
  Result<void> parse_options(std::string_view s, PortRef here, Location at) {
    TopoPort& port = topo_.port(here);
    const size_t hash = s.find('#');
    const std::string_view options = s.substr(0, hash);
    for (size_t eq = options.find('='); eq != std::string_view::npos; eq = options.find('=', eq + 1)) {
      size_t k = eq;
      while (k > 0 && !std::isalpha(static_cast<unsigned char>(options[k - 1]))) --k;
      if (k == 0) return error(at, "port option without a name before '='");
      auto v = parse_number(options.substr(eq + 1));
      if (!v) return error(at, "port option without a value");
      switch (options[k - 1]) {
        case 'w':
          if (*v < 1 || *v > 31) return error(at, fmt::format("bad enabled width {} (1..31)", *v));
          port.caps.width_enabled = static_cast<uint8_t>(*v);
          break;
        case 's':
          if (*v > 7) return error(at, fmt::format("bad enabled speed {} (1..7)", *v));
          port.caps.speed_enabled = static_cast<uint8_t>(*v ? *v : 4);  // 0: QDR (ibsim 0.12)
          break;
        case 'e':
          if (*v > 15) return error(at, fmt::format("bad extended speed {} (0..15)", *v));
          port.caps.ext_speed_enabled = static_cast<uint8_t>(*v);
          break;
        default: break;  // ibsim ignores other letters
      }
    }
    if (hash == std::string_view::npos) return {};
    const std::string_view comment = s.substr(hash + 1);
    if (topo_.node(here.node).type != NodeType::kSwitch) {
      if (auto lid = keyed_number(comment, "lid ")) {
        if (*lid > Lid::kMaxUnicast) return error(at, fmt::format("lid {} is not a unicast LID", *lid));
        port.lid = Lid(static_cast<uint16_t>(*lid));
        if (auto lmc = keyed_number(comment, "lmc ")) {
          if (*lmc > 7) return error(at, fmt::format("lmc {} out of range 0..7", *lmc));
          port.lmc = static_cast<uint8_t>(*lmc);
        }
      }
    }
    // The last "lid" with no quote after it: "lid 3 4xEDR".
    const size_t last_quote = comment.rfind('"');
    const std::string_view tail = last_quote == std::string_view::npos ? comment : comment.substr(last_quote + 1);
    if (const size_t lid = tail.find("lid "); lid != std::string_view::npos) {
      std::string_view a = trim(tail.substr(lid + 4));
      const size_t space = a.find_first_of(" \t");
      if (space != std::string_view::npos) {
        std::string_view token = trim(a.substr(space + 1));
        token = token.substr(0, token.find_first_of(" \t"));
        if (auto caps = caps_from_annotation(token)) port.caps = *caps;
      }
    }
    return {};
  }

  std::string alias_name(std::string_view ref) const {
    // "@a" is local to the current module; "mod@a" names another module's alias.
    if (ref.starts_with('@')) return module_ + std::string(ref);
    if (ref.find('@') != std::string_view::npos) return std::string(ref);
    return module_ + "@" + std::string(ref);
  }

  Result<PortRef> resolve_remote(const PortDecl& d) {
    if (d.remote_is_alias) {
      auto it = aliases_.find(d.remote);
      if (it == aliases_.end()) return error(d.at, fmt::format("unknown alias \"{}\"", d.remote));
      return it->second.port;
    }
    auto n = topo_.find(d.remote);
    if (!n)
      return error(d.at, fmt::format("cannot find remote node \"{}\" cabled to \"{}\" port {}",
                                     d.remote, topo_.node(d.here.node).id, d.here.port));
    const TopoNode& remote = topo_.node(*n);
    if (d.remote_port > remote.num_ports)
      return error(d.at, fmt::format("remote port {} out of range: \"{}\" has ports 1..{}",
                                     d.remote_port, remote.id, remote.num_ports));
    return PortRef{*n, d.remote_port};
  }

 public:
  void adopt_remote_guids() {
    // A "(guid)" on the far end's line names the remote port's GUID: adopt it where the
    // owner did not state its own (ibnetdiscover writes both; ibsim files neither).
    for (const auto& [decl, guid] : remote_guids_) {
      const PortDecl& d = decls_[decl];
      if (d.remote_is_alias) continue;
      if (auto n = topo_.find(d.remote); n && d.remote_port <= topo_.node(*n).num_ports) {
        TopoPort& port = topo_.port({*n, d.remote_port});
        const TopoNode& rn = topo_.node(*n);
        if (rn.type != NodeType::kSwitch && port.guid == Guid(rn.node_guid.value() + d.remote_port))
          port.guid = guid;
      }
    }
  }

 private:
  struct GuidCounter {
    uint64_t base = 0;
    uint64_t next = 0;
  };

  const NetReadOptions& options_;
  Topology topo_;
  std::vector<std::string> files_;
  std::vector<std::string> warnings_;
  std::vector<PortDecl> decls_;
  std::vector<uint32_t> decl_of_slot_;  // by port slot: index + 1 into decls_, 0 = none
  std::vector<std::pair<uint32_t, Guid>> remote_guids_;
  std::unordered_map<std::string, AliasDecl> aliases_;
  // ibsim's GUID counters: CAs from 0x100000, switches from 0x200000 (index = NodeType).
  std::array<GuidCounter, 4> counters_{GuidCounter{}, GuidCounter{0x100000, 0x100000},
                                       GuidCounter{0x200000, 0x200000},
                                       GuidCounter{0x300000, 0x300000}};
  Guid next_port0_guid_;
  uint32_t vendor_id_ = 0;
  uint16_t device_id_ = 0;
  Guid system_image_guid_;
  LinkCaps default_caps_;
  std::string module_;
};

Result<NetFile> finish(Parser& parser) {
  parser.adopt_remote_guids();
  SOFTIB_TRY(parser.resolve());
  return parser.take();
}

}  // namespace

Result<NetFile> read_net_file(const std::string& path, const NetReadOptions& options) {
  Parser parser(options);
  SOFTIB_TRY(parser.parse_file(path, 0));
  return finish(parser);
}

Result<NetFile> read_net(std::string_view text, std::string_view name, const NetReadOptions& options) {
  Parser parser(options);
  SOFTIB_TRY(parser.parse_text(text, name, 0));
  return finish(parser);
}

}  // namespace softib::fabric
