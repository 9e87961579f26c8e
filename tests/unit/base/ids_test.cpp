#include <gtest/gtest.h>

#include <type_traits>
#include <unordered_set>

#include "base/format.hpp"
#include "base/gid.hpp"
#include "base/ids.hpp"

namespace softib {
namespace {

TEST(Lid, RangesFollowIba) {
  EXPECT_TRUE(Lid(0).is_reserved());
  EXPECT_TRUE(Lid(1).is_unicast());
  EXPECT_TRUE(Lid(0xBFFF).is_unicast());
  EXPECT_FALSE(Lid(0xC000).is_unicast());
  EXPECT_TRUE(Lid(0xC000).is_multicast());
  EXPECT_TRUE(Lid(0xFFFE).is_multicast());
  EXPECT_FALSE(Lid(0xFFFF).is_multicast());
  EXPECT_TRUE(Lid::permissive().is_permissive());
  EXPECT_LT(Lid(3), Lid(7));  // LIDs sort
}

TEST(Ids, DistinctTypesDoNotMix) {
  static_assert(!std::is_convertible_v<Lid, Qpn>);
  static_assert(!std::is_convertible_v<uint16_t, Lid>);  // explicit only
  static_assert(!std::is_convertible_v<RKey, LKey>);
  static_assert(!std::equality_comparable_with<Lid, PKey>);
}

TEST(Ids, FormattingConventions) {
  EXPECT_EQ(fmt::format("{}", Lid(12)), "12");
  EXPECT_EQ(fmt::format("{}", Qpn(0x11)), "0x000011");
  EXPECT_EQ(fmt::format("{}", Psn(0xabc)), "0x000abc");
  EXPECT_EQ(fmt::format("{}", Guid(0x0002c90300001000)), "0x0002c90300001000");
  EXPECT_EQ(fmt::format("{}", PKey(0xffff)), "0xffff");
  EXPECT_EQ(fmt::format("{}", QKey(0x11111111)), "0x11111111");
}

template <class T>
concept HasLessThan = requires(T a, T b) { a < b; };

TEST(Psn, HasNoOrdering) {
  static_assert(!HasLessThan<Psn>, "PSNs wrap: compare with distance() or before()");
  static_assert(HasLessThan<Lid>);
}

TEST(Psn, WrapsAt24Bits) {
  EXPECT_EQ(Psn(0xFFFFFF) + 1, Psn(0));
  EXPECT_EQ(Psn(0xFFFFFE) + 5, Psn(3));
  EXPECT_EQ(Psn(2) - 5, Psn(0xFFFFFD));
  EXPECT_EQ(Psn::wrap(0x1000005), Psn(5));
  Psn p(0xFFFFFF);
  ++p;
  EXPECT_EQ(p, Psn(0));
}

TEST(Psn, SignedDistanceAcrossWrap) {
  EXPECT_EQ(Psn::distance(Psn(0xFFFFFE), Psn(1)), 3);
  EXPECT_EQ(Psn::distance(Psn(1), Psn(0xFFFFFE)), -3);
  EXPECT_EQ(Psn::distance(Psn(5), Psn(5)), 0);
  // The window is [-2^23, 2^23): exactly half way is negative.
  EXPECT_EQ(Psn::distance(Psn(0), Psn(0x800000)), -0x800000);
  EXPECT_EQ(Psn::distance(Psn(0), Psn(0x7FFFFF)), 0x7FFFFF);
  EXPECT_TRUE(before(Psn(0xFFFFF0), Psn(0x10)));
  EXPECT_FALSE(before(Psn(0x10), Psn(0xFFFFF0)));
  EXPECT_FALSE(before(Psn(7), Psn(7)));
}

TEST(Psn, DistanceIsConsistentWithAddition) {
  // from + distance(from, to) == to for a spread of pairs, including the wrap.
  for (uint32_t from : {0u, 1u, 0x7FFFFFu, 0x800000u, 0xFFFFFFu, 0x123456u}) {
    for (uint32_t to : {0u, 2u, 0x7FFFFEu, 0x800001u, 0xFFFFFEu, 0xABCDEFu}) {
      const int32_t d = Psn::distance(Psn(from), Psn(to));
      const Psn back = d >= 0 ? Psn(from) + static_cast<uint32_t>(d)
                              : Psn(from) - static_cast<uint32_t>(-d);
      EXPECT_EQ(back, Psn(to)) << from << " -> " << to;
    }
  }
}

TEST(PKey, MembershipAndMatching) {
  const PKey full(0xFFFF), limited(0x7FFF), other(0x8001);
  EXPECT_TRUE(full.is_full_member());
  EXPECT_FALSE(limited.is_full_member());
  EXPECT_EQ(full.base(), 0x7FFF);
  EXPECT_TRUE(pkey_match(full, limited));
  EXPECT_TRUE(pkey_match(full, full));
  EXPECT_FALSE(pkey_match(limited, limited));  // two limited members cannot talk
  EXPECT_FALSE(pkey_match(full, other));
  EXPECT_FALSE(PKey(0x8000).is_valid());
  EXPECT_FALSE(pkey_match(PKey(0x8000), PKey(0x0000)));
  EXPECT_EQ(limited.as_full(), full);
  EXPECT_EQ(full.as_limited(), limited);
}

TEST(Gid, PrefixGuidAndText) {
  const Gid g(Gid::kDefaultSubnetPrefix, Guid(0x0002c9fffe000002));
  EXPECT_EQ(g.subnet_prefix(), 0xFE80000000000000ULL);
  EXPECT_EQ(g.interface_id(), Guid(0x0002c9fffe000002));
  EXPECT_EQ(g.to_string(), "fe80::2:c9ff:fe00:2");
  EXPECT_EQ(Gid::parse("fe80::2:c9ff:fe00:2"), g);
  EXPECT_FALSE(Gid::parse("not a gid").has_value());
  EXPECT_FALSE(g.is_multicast());
  EXPECT_TRUE(Gid::parse("ff12:401b:ffff::ffff:ffff")->is_multicast());
}

TEST(Gid, Ipv4Mapped) {
  const Gid g = Gid::from_ipv4(0x7F000001);
  EXPECT_TRUE(g.is_ipv4_mapped());
  EXPECT_EQ(g.ipv4(), 0x7F000001u);
  EXPECT_EQ(g.to_string(), "::ffff:127.0.0.1");
  EXPECT_FALSE(Gid(Gid::kDefaultSubnetPrefix, Guid(1)).is_ipv4_mapped());
}

TEST(Ids, Hashable) {
  std::unordered_set<Lid> lids{Lid(1), Lid(2), Lid(1)};
  EXPECT_EQ(lids.size(), 2u);
  std::unordered_set<Gid> gids{Gid::from_ipv4(1), Gid::from_ipv4(1)};
  EXPECT_EQ(gids.size(), 1u);
}

}  // namespace
}  // namespace softib
