// The guid2lid file: OpenSM's persistent port GUID -> LID range map (its cache directory's
// "guid2lid"), which keeps LIDs stable across sweeps and SM restarts. Format, one entry per
// port, each followed by a blank line:
//
//   0x0002c903000a1b2d 0x0001 0x0001
//
// (GUID, lowest LID, highest LID of the port's LMC range). Writes are atomic: a temporary
// file, fsync, rename.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.hpp"
#include "base/result.hpp"

namespace softib::sm {

struct LidRange {
  Lid min;
  Lid max;
  friend bool operator==(const LidRange&, const LidRange&) = default;
};

class Guid2Lid {
 public:
  // Entries OpenSM would skip (a key that is not a number, a bad range) are skipped with a
  // warning "name:line: ..."; they never abort the load.
  static Guid2Lid parse(std::string_view text, std::string_view name, std::vector<std::string>* warnings = nullptr);
  // A missing file is an empty map (a first start); other errors are returned.
  static Result<Guid2Lid> load(const std::string& path, std::vector<std::string>* warnings = nullptr);

  std::optional<LidRange> get(Guid port_guid) const;
  void set(Guid port_guid, LidRange range) { map_[port_guid] = range; }
  void erase(Guid port_guid) { map_.erase(port_guid); }
  size_t size() const { return map_.size(); }
  const std::map<Guid, LidRange>& entries() const { return map_; }

  std::string to_text() const;
  Result<void> save(const std::string& path) const;

  friend bool operator==(const Guid2Lid&, const Guid2Lid&) = default;

 private:
  std::map<Guid, LidRange> map_;
};

}  // namespace softib::sm
