// Seeded randomness for tests. The seed defaults to a hash of the running test's name, so
// runs are reproducible; SOFTIB_TEST_SEED=<n> overrides it. Every failure inside a test that
// holds a TestRng prints the seed and how to rerun with it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace softib::testing {

inline uint64_t choose_seed() {
  if (const char* env = std::getenv("SOFTIB_TEST_SEED")) return std::strtoull(env, nullptr, 0);
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  return h;
}

class TestRng {
 public:
  TestRng() : TestRng(choose_seed()) {}
  explicit TestRng(uint64_t seed)
      : seed_(seed),
        engine_(seed),
        trace_(__FILE__, __LINE__,
               "random seed " + std::to_string(seed) + " (rerun with SOFTIB_TEST_SEED=" +
                   std::to_string(seed) + ")") {}

  uint64_t seed() const { return seed_; }
  uint64_t next() { return engine_(); }
  // Uniform in [0, 2^bits).
  uint64_t bits(uint32_t bits) { return bits >= 64 ? next() : next() & ((uint64_t{1} << bits) - 1); }
  // Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(engine_);
  }
  bool coin() { return (next() & 1) != 0; }
  std::mt19937_64& engine() { return engine_; }

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
  ::testing::ScopedTrace trace_;
};

}  // namespace softib::testing
