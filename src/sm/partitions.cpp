#include "sm/partitions.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/format.hpp"

namespace softib::sm {

std::string_view to_string(Membership m) {
  switch (m) {
    case Membership::kLimited: return "limited";
    case Membership::kFull: return "full";
    case Membership::kBoth: return "both";
  }
  return "?";
}

const Partition* PartitionConfig::find(PKey pkey) const {
  for (const Partition& p : partitions)
    if (p.pkey.base() == pkey.base()) return &p;
  return nullptr;
}

Gid ipoib_broadcast_mgid(PKey pkey, uint8_t scope) {
  std::array<uint8_t, 16> raw{0xFF, static_cast<uint8_t>(0x10 | (scope & 0xF)), 0x40, 0x1B};
  const uint16_t full = static_cast<uint16_t>(pkey.value() | PKey::kFullMemberBit);
  raw[4] = static_cast<uint8_t>(full >> 8);
  raw[5] = static_cast<uint8_t>(full);
  raw[12] = raw[13] = raw[14] = raw[15] = 0xFF;
  return Gid(raw);
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// OpenSM matches keywords with strncmp(word, keyword, strlen(word)): any non-empty prefix.
bool abbrev(std::string_view word, std::string_view keyword) {
  return !word.empty() && keyword.starts_with(word);
}

// strtoul(s, &end, 0) that must consume everything.
std::optional<uint64_t> number(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 24) return std::nullopt;
  char buf[32] = {};
  s.copy(buf, s.size());
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(buf, &end, 0);
  if (end == buf || *end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

// "name=value" with blanks around either part allowed.
std::pair<std::string_view, std::optional<std::string_view>> name_value(std::string_view token) {
  const size_t eq = token.find('=');
  if (eq == std::string_view::npos) return {trim(token), std::nullopt};
  return {trim(token.substr(0, eq)), trim(token.substr(eq + 1))};
}

struct GroupFlags {
  uint8_t mtu = 4, rate = 3, sl = 0, tclass = 0;
  uint32_t qkey = 0, flow_label = 0;
  uint16_t scope_mask = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view name) : name_(name) {
    // The default partition exists before any rule: ALL limited, SELF full.
    Partition d;
    d.name = "Default";
    d.pkey = kDefaultPKey;
    d.members = {{PartitionMember::Kind::kAll, Guid(), Membership::kLimited},
                 {PartitionMember::Kind::kSelf, Guid(), Membership::kFull}};
    config_.partitions.push_back(std::move(d));
  }

  Result<PartitionConfig> parse(std::string_view text) {
    int line_no = 0;
    while (!text.empty()) {
      const size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
      ++line_no;
      line = line.substr(0, line.find('#'));
      while (!trim(line).empty()) {
        const size_t semi = line.find(';');
        const std::string_view segment = line.substr(0, semi);
        SOFTIB_TRY(parse_segment(segment, line_no));
        if (semi == std::string_view::npos) break;
        current_.reset();  // ';' ends the definition
        line = line.substr(semi + 1);
      }
    }
    if (current_)
      config_.warnings.push_back(fmt::format("{}:{}: definition of partition 0x{:04x} has no ';'", name_,
                                             line_no, config_.partitions[*current_].pkey.value()));
    // Partitions nobody belongs to are dropped (OpenSM does the same).
    std::erase_if(config_.partitions, [](const Partition& p) { return p.members.empty(); });
    return std::move(config_);
  }

 private:
  Status error(int line, std::string_view reason) const {
    return Status(Code::kParseError, fmt::format("{}:{}: {}", name_, line, reason));
  }
  void warn(int line, std::string_view text) { config_.warnings.push_back(fmt::format("{}:{}: {}", name_, line, text)); }

  Result<void> parse_segment(std::string_view segment, int line) {
    if (trim(segment).empty()) return {};
    std::string_view members = segment;
    if (!current_) {
      const size_t colon = segment.find(':');
      if (colon == std::string_view::npos) return error(line, "no partition definition found (expected \"Name=PKey : ports ;\")");
      SOFTIB_TRY(parse_header(segment.substr(0, colon), line));
      members = segment.substr(colon + 1);
    }
    // Members, comma separated; an mgid entry takes the rest of the line as its flags.
    while (true) {
      const size_t comma = members.find(',');
      const std::string_view item = members.substr(0, comma);
      auto [name, value] = name_value(item);
      if (name == "mgid") {
        const std::string_view flags = comma == std::string_view::npos ? std::string_view{} : members.substr(comma + 1);
        return parse_mgid(value.value_or(""), flags, line);
      }
      SOFTIB_TRY(add_member(name, value, line));
      if (comma == std::string_view::npos) return {};
      members = members.substr(comma + 1);
    }
  }

  Result<void> parse_header(std::string_view header, int line) {
    std::vector<std::string_view> tokens;
    while (true) {
      const size_t comma = header.find(',');
      tokens.push_back(header.substr(0, comma));
      if (comma == std::string_view::npos) break;
      header = header.substr(comma + 1);
    }
    auto [name, id] = name_value(tokens[0]);
    if (!id && !name.empty() && std::isdigit(static_cast<unsigned char>(name.front()))) {
      id = name;
      name = {};
    }
    flags_ = GroupFlags{};
    ipoib_ = false;
    index0_ = false;
    default_membership_ = Membership::kLimited;
    for (size_t i = 1; i < tokens.size(); ++i) {
      auto [flag, value] = name_value(tokens[i]);
      if (flag.empty()) return error(line, "bad partition flags (empty flag)");
      SOFTIB_TRY(partition_flag(flag, value, line));
    }
    uint16_t pkey = 0;
    if (id) {
      auto v = number(*id);
      if (!v || *v > 0xFFFF) return error(line, fmt::format("bad partition definition: P_Key \"{}\" is not a 16-bit number", *id));
      pkey = static_cast<uint16_t>(*v & 0x7FFF);  // only the low 15 bits are used
      if (pkey == 0) return error(line, "bad partition definition: P_Key 0 is invalid");
    } else {
      while (++pkey_counter_ < 0x7FFF && config_.find(PKey(pkey_counter_))) {
      }
      if (pkey_counter_ >= 0x7FFF) return error(line, "no free P_Key left to generate");
      pkey = pkey_counter_;
    }
    // Same P_Key: merge into the existing partition (its first name stays).
    for (size_t i = 0; i < config_.partitions.size(); ++i) {
      if (config_.partitions[i].pkey.base() != pkey) continue;
      current_ = i;
      Partition& p = config_.partitions[i];
      if (p.line == 0 && pkey == kDefaultPKey.value()) {
        p.line = line;  // the file defines the default partition itself
        if (!name.empty()) p.name = std::string(name);
      }
      finish_header(p, line);
      return {};
    }
    Partition p;
    p.name = std::string(name);
    p.pkey = PKey(pkey);
    p.line = line;
    config_.partitions.push_back(std::move(p));
    current_ = config_.partitions.size() - 1;
    finish_header(config_.partitions.back(), line);
    return {};
  }

  void finish_header(Partition& p, int line) {
    p.ipoib = p.ipoib || ipoib_;
    p.index0 = p.index0 || index0_;
    p.sl = flags_.sl;
    if (!ipoib_) return;
    McGroupSpec g;
    g.mtu = flags_.mtu;
    g.rate = flags_.rate;
    g.sl = flags_.sl;
    g.qkey = QKey(flags_.qkey ? flags_.qkey : kIpoibQKey.value());
    g.tclass = flags_.tclass;
    g.flow_label = flags_.flow_label;
    for (uint8_t scope : scopes(flags_.scope_mask, 2)) {
      g.mgid = ipoib_broadcast_mgid(p.pkey, scope);
      add_group(p, g, line);
    }
  }

  static std::vector<uint8_t> scopes(uint16_t mask, uint8_t fallback) {
    std::vector<uint8_t> out;
    for (uint8_t s = 0; s < 16; ++s)
      if (mask & (1u << s)) out.push_back(s);
    if (out.empty()) out.push_back(fallback);
    return out;
  }

  void add_group(Partition& p, const McGroupSpec& g, int line) {
    for (const Partition& other : config_.partitions)
      for (const McGroupSpec& existing : other.groups)
        if (existing.mgid == g.mgid) {
          warn(line, fmt::format("multicast group {} already defined; ignored", g.mgid));
          return;
        }
    p.groups.push_back(g);
  }

  // Returns true when `flag` is a group flag (mtu, rate, scope, Q_Key, TClass, sl, FlowLabel).
  Result<bool> group_flag(GroupFlags& f, std::string_view flag, std::optional<std::string_view> value, int line) {
    const auto need = [&](uint64_t max, std::string_view what) -> Result<uint64_t> {
      if (!value) return error(line, fmt::format("flag '{}' needs a value", what));
      auto v = number(*value);
      if (!v || *v > max) return error(line, fmt::format("flag '{}': \"{}\" is not a number up to {}", what, *value, max));
      return *v;
    };
    // The order is OpenSM's, which decides what an abbreviation means ("s" is scope).
    if (abbrev(flag, "mtu")) {
      auto v = need(5, "mtu");
      if (!v) return Err{v.error()};
      if (*v < 1) return error(line, "flag 'mtu': IBA MTU codes are 1 (256) to 5 (4096)");
      f.mtu = static_cast<uint8_t>(*v);
    } else if (abbrev(flag, "rate")) {
      auto v = need(22, "rate");
      if (!v) return Err{v.error()};
      if (*v < 2) return error(line, "flag 'rate': IBA rate codes start at 2 (2.5 Gb/s)");
      f.rate = static_cast<uint8_t>(*v);
    } else if (abbrev(flag, "scope")) {
      auto v = need(15, "scope");
      if (!v) return Err{v.error()};
      if (*v == 0) return error(line, "flag 'scope': scope 0 is reserved");
      f.scope_mask = static_cast<uint16_t>(f.scope_mask | (1u << *v));
    } else if (abbrev(flag, "Q_Key")) {
      auto v = need(0xFFFFFFFF, "Q_Key");
      if (!v) return Err{v.error()};
      f.qkey = static_cast<uint32_t>(*v);
    } else if (abbrev(flag, "TClass")) {
      auto v = need(0xFF, "TClass");
      if (!v) return Err{v.error()};
      f.tclass = static_cast<uint8_t>(*v);
    } else if (abbrev(flag, "sl")) {
      auto v = need(15, "sl");
      if (!v) return Err{v.error()};
      f.sl = static_cast<uint8_t>(*v);
    } else if (abbrev(flag, "FlowLabel")) {
      auto v = need(0xFFFFF, "FlowLabel");
      if (!v) return Err{v.error()};
      f.flow_label = static_cast<uint32_t>(*v);
    } else {
      return false;
    }
    return true;
  }

  Result<void> partition_flag(std::string_view flag, std::optional<std::string_view> value, int line) {
    auto group = group_flag(flags_, flag, value, line);
    if (!group) return Err{group.error()};
    if (*group) return {};
    if (abbrev(flag, "ipoib")) {
      ipoib_ = true;
    } else if (abbrev(flag, "defmember")) {
      auto m = value ? membership(*value) : std::nullopt;
      if (!m) return error(line, "flag 'defmember' wants full, limited or both");
      default_membership_ = *m;
    } else if (flag == "indx0") {
      index0_ = true;
    } else {
      warn(line, fmt::format("unrecognized partition flag '{}' ignored", flag));
    }
    return {};
  }

  static std::optional<Membership> membership(std::string_view v) {
    if (abbrev(v, "full")) return Membership::kFull;
    if (abbrev(v, "both")) return Membership::kBoth;
    if (abbrev(v, "limited")) return Membership::kLimited;
    return std::nullopt;
  }

  Result<void> add_member(std::string_view name, std::optional<std::string_view> flag, int line) {
    if (name.empty() || abbrev(name, "NONE")) return {};
    PartitionMember m;
    m.membership = default_membership_;
    if (flag) {
      auto parsed = membership(*flag);
      if (!parsed) warn(line, fmt::format("unrecognized port flag '{}', assuming limited", *flag));
      m.membership = parsed.value_or(Membership::kLimited);
    }
    // OpenSM tests the keywords in this order with prefix matching.
    if (abbrev(name, "ALL")) {
      m.kind = PartitionMember::Kind::kAll;
    } else if (abbrev(name, "ALL_CAS")) {
      m.kind = PartitionMember::Kind::kAllCas;
    } else if (abbrev(name, "ALL_SWITCHES")) {
      m.kind = PartitionMember::Kind::kAllSwitches;
    } else if (abbrev(name, "ALL_ROUTERS")) {
      m.kind = PartitionMember::Kind::kAllRouters;
    } else if (abbrev(name, "SELF")) {
      m.kind = PartitionMember::Kind::kSelf;
    } else {
      auto guid = number(name);
      if (!guid || *guid == 0) return error(line, fmt::format("bad PortGUID \"{}\"", name));
      m.guid = Guid(*guid);
    }
    config_.partitions[*current_].members.push_back(m);
    return {};
  }

  Result<void> parse_mgid(std::string_view text, std::string_view flags, int line) {
    Partition& p = config_.partitions[*current_];
    auto gid = Gid::parse(trim(text));
    if (!gid || !gid->is_multicast()) return error(line, fmt::format("mgid \"{}\": gid is not multicast", trim(text)));
    GroupFlags f = flags_;  // inherit the partition's flags, then override
    while (!trim(flags).empty()) {
      const size_t comma = flags.find(',');
      auto [flag, value] = name_value(flags.substr(0, comma));
      auto known = group_flag(f, flag, value, line);
      if (!known) return Err{known.error()};
      if (!*known) warn(line, fmt::format("unrecognized mgroup flag '{}' ignored", flag));
      if (comma == std::string_view::npos) break;
      flags = flags.substr(comma + 1);
    }
    std::array<uint8_t, 16> raw = gid->raw();
    const uint16_t signature = static_cast<uint16_t>(raw[2] << 8 | raw[3]);
    if (signature == 0x401B || signature == 0x601B) {  // an IP (IPoIB) group
      const uint16_t mpkey = static_cast<uint16_t>(raw[4] << 8 | raw[5]);
      const uint16_t want = static_cast<uint16_t>(p.pkey.value() | PKey::kFullMemberBit);
      if (mpkey != 0 && mpkey != want)
        return error(line, fmt::format("IP multicast group {} has P_Key 0x{:04x}, but partition \"{}\" is 0x{:04x}",
                                       *gid, mpkey, p.name, p.pkey.value()));
      if (f.rate != flags_.rate || f.mtu != flags_.mtu)
        return error(line, fmt::format("IP multicast group {} must use its partition's broadcast rate {} and "
                                       "mtu {} (got rate {} mtu {})",
                                       *gid, flags_.rate, flags_.mtu, f.rate, f.mtu));
      raw[4] = static_cast<uint8_t>(want >> 8);
      raw[5] = static_cast<uint8_t>(want);
      if (f.qkey == 0) f.qkey = kIpoibQKey.value();
    }
    McGroupSpec g;
    g.mtu = f.mtu;
    g.rate = f.rate;
    g.sl = f.sl;
    g.qkey = QKey(f.qkey);
    g.tclass = f.tclass;
    g.flow_label = f.flow_label;
    for (uint8_t scope : scopes(f.scope_mask, static_cast<uint8_t>(raw[1] & 0xF))) {
      raw[1] = static_cast<uint8_t>((raw[1] & 0xF0) | scope);
      g.mgid = Gid(raw);
      add_group(p, g, line);
    }
    return {};
  }

  std::string name_;
  PartitionConfig config_;
  std::optional<size_t> current_;
  GroupFlags flags_;
  bool ipoib_ = false;
  bool index0_ = false;
  Membership default_membership_ = Membership::kLimited;
  uint16_t pkey_counter_ = 0;
};

}  // namespace

Result<PartitionConfig> parse_partitions(std::string_view text, std::string_view name) {
  return Parser(name).parse(text);
}

Result<PartitionConfig> read_partitions_file(const std::string& path) {
  auto text = read_file(path, "partition file");
  if (!text) return text.error();
  return parse_partitions(*text, path);
}

PartitionConfig default_partitions() {
  PartitionConfig c;
  Partition d;
  d.name = "Default";
  d.pkey = kDefaultPKey;
  d.ipoib = true;
  d.members = {{PartitionMember::Kind::kAll, Guid(), Membership::kFull},
               {PartitionMember::Kind::kSelf, Guid(), Membership::kFull}};
  McGroupSpec g;
  g.mgid = ipoib_broadcast_mgid(kDefaultPKey);
  g.qkey = kIpoibQKey;
  d.groups.push_back(g);
  c.partitions.push_back(std::move(d));
  return c;
}

}  // namespace softib::sm
