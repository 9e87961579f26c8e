#include "sm/guid2lid.hpp"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/format.hpp"

namespace softib::sm {

namespace {

std::optional<uint64_t> number(std::string_view s) {
  if (s.empty() || s.size() > 24) return std::nullopt;
  char buf[32] = {};
  s.copy(buf, s.size());
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(buf, &end, 0);
  if (end == buf || *end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

}  // namespace

Guid2Lid Guid2Lid::parse(std::string_view text, std::string_view name, std::vector<std::string>* warnings) {
  Guid2Lid g;
  int line_no = 0;
  const auto warn = [&](std::string_view why) {
    if (warnings) warnings->push_back(fmt::format("{}:{}: {}; entry ignored", name, line_no, why));
  };
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    const auto w = words(line);
    if (w.empty()) continue;
    if (w.size() != 3) {
      warn("expected \"<guid> <min lid> <max lid>\"");
      continue;
    }
    auto guid = number(w[0]);
    auto lo = number(w[1]);
    auto hi = number(w[2]);
    if (!guid || *guid == 0) {
      warn("bad GUID");
      continue;
    }
    if (!lo || !hi || *lo == 0 || *hi < *lo || *hi > Lid::kMaxUnicast) {
      warn("bad LID range");
      continue;
    }
    if (g.map_.contains(Guid(*guid))) {
      warn(fmt::format("GUID {} listed twice", Guid(*guid)));
      continue;
    }
    g.map_[Guid(*guid)] = LidRange{Lid(static_cast<uint16_t>(*lo)), Lid(static_cast<uint16_t>(*hi))};
  }
  return g;
}

Result<Guid2Lid> Guid2Lid::load(const std::string& path, std::vector<std::string>* warnings) {
  auto text = read_file(path, "guid2lid file");
  if (!text) {
    if (text.error().code() == Code::kNotFound) return Guid2Lid{};
    return text.error();
  }
  return parse(*text, path, warnings);
}

std::optional<LidRange> Guid2Lid::get(Guid port_guid) const {
  auto it = map_.find(port_guid);
  if (it == map_.end()) return std::nullopt;
  return it->second;
}

std::string Guid2Lid::to_text() const {
  std::string out;
  for (const auto& [guid, range] : map_)
    out += fmt::format("0x{:016x} 0x{:04x} 0x{:04x}\n\n", guid.value(), range.min.value(), range.max.value());
  return out;
}

Result<void> Guid2Lid::save(const std::string& path) const { return write_file_atomic(path, to_text()); }

}  // namespace softib::sm
