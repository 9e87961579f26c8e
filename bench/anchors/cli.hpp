// The command line of an anchor program: "--option value" pairs, a few flags, positive
// integers. Header only: the anchors link no softib module (CMakeLists.txt here).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace anchor {

struct Cli {
  const char* name;      // in messages: "memcpy_bw: ..."
  const char* synopsis;  // "usage: anchor_memcpy_bw [--sizes 64,4096,...] ..."

  // Prints the problem and the synopsis; exit status 2.
  [[noreturn]] void usage(const std::string& msg) const {
    fmt::print(stderr, "{}: {}\n{}\n", name, msg, synopsis);
    std::exit(2);
  }

  // A positive decimal integer (`what` names it in the message).
  uint64_t positive(const std::string& s, const char* what = "integer") const {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || *end != '\0' || v == 0)
      usage(fmt::format("expected a positive {}, got '{}'", what, s));
    return v;
  }

  // "a,b,c" -> {"a", "b", "c"} (an empty item stays, for the caller to refuse).
  static std::vector<std::string> split(const std::string& list) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= list.size()) {
      const size_t comma = std::min(list.find(',', pos), list.size());
      out.push_back(list.substr(pos, comma - pos));
      pos = comma + 1;
    }
    return out;
  }

  // Calls on(option, value) for each "--option value" of argv, and on(flag, "") for each of
  // `flags` given; on returns false for an option it does not take.
  template <class On>
  void each(int argc, char** argv, std::initializer_list<std::string_view> flags, On on) const {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      bool flag = false;
      for (std::string_view f : flags) flag = flag || a == f;
      std::string value;
      if (!flag) {
        if (i + 1 >= argc) usage("missing value for " + a);
        value = argv[++i];
      }
      if (!on(a, value)) usage("unknown option " + a);
    }
  }
};

}  // namespace anchor
