// Parsing allocates nothing: the global allocation functions of this test binary count the
// allocations made while a flag is up, and parsing valid and broken packets of every kind
// must leave the count at zero.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "packet/builder.hpp"
#include "packet/packet_view.hpp"
#include "unit/packet/random_packets.hpp"

namespace {

thread_local bool counting = false;
thread_local size_t allocations = 0;

void* counted_alloc(size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace softib::packet {
namespace {

using namespace softib::packet::testing;
using Bytes = std::vector<uint8_t>;

template <class F>
size_t allocations_in(F&& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations;
}

TEST(PacketView, ParsingAllocatesNothing) {
  TestRng rng;
  size_t parsed = 0, rejected = 0;
  for (const OpcodeInfo& info : kOpcodeTable) {
    const size_t n = valid_payload_size(info, 13);
    Bytes ib(ib_packet_length(true, info, n));
    ASSERT_TRUE(build_ib(random_route(rng, true), random_headers(rng, info), random_bytes(rng, n), ib).ok());
    Bytes d(roce_v2_packet_length(true, info, n));
    ASSERT_TRUE(build_roce_v2(random_addressing(rng, true), random_headers(rng, info), random_bytes(rng, n), d).ok());
    for (size_t cut : {ib.size(), ib.size() - 1, size_t{30}, size_t{3}}) {
      EXPECT_EQ(allocations_in([&] {
                  auto v = PacketView::parse_ib(wire::ByteSpan(ib).first(cut));
                  (v.ok() ? parsed : rejected)++;
                }),
                0u)
          << info.name << " cut " << cut;
    }
    Bytes damaged = d;
    damaged[50] ^= 0xFF;
    for (const Bytes* b : {&d, &damaged}) {
      EXPECT_EQ(allocations_in([&] {
                  auto v = PacketView::parse_roce_v2(*b);
                  (v.ok() ? parsed : rejected)++;
                  auto t = PacketView::parse_roce_v2_transport(wire::ByteSpan(*b).subspan(48, b->size() - 52));
                  (t.ok() ? parsed : rejected)++;
                }),
                0u)
          << info.name;
    }
  }
  // The loop saw both outcomes, so both paths were measured.
  EXPECT_GT(parsed, 100u);
  EXPECT_GT(rejected, 100u);
  // And the counter does count.
  EXPECT_EQ(allocations_in([] { delete new int(1); }), 1u);
}

}  // namespace
}  // namespace softib::packet
