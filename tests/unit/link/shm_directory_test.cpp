// ShmDirectory: HCAs, ports and endpoints as softibd writes them and processes read them.
#include <gtest/gtest.h>

#include "link/shm_directory.hpp"

namespace softib::link {
namespace {

PortSnapshot active_port(uint16_t lid, uint8_t lmc = 0) {
  PortSnapshot s;
  s.state = 4;
  s.phys_state = 5;
  s.lid = lid;
  s.lmc = lmc;
  s.num_pkeys = 1;
  s.pkeys[0] = 0xFFFF;
  return s;
}

TEST(ShmDirectory, FindsTheEndpointBehindALidAndAQpn) {
  auto dir = ShmDirectory::create({16, 16, 16});
  ASSERT_TRUE(dir.ok()) << dir.error().to_string();
  const uint32_t hca = *dir->hca_slot(5, 0x1234);
  EXPECT_EQ(*dir->hca_slot(5, 0x1234), hca) << "one slot per node";
  const uint32_t port = *dir->port_slot(hca, 1);
  dir->write_port(port, active_port(9, 2));
  auto e1 = dir->add_endpoint(hca, 100);
  auto e2 = dir->add_endpoint(hca, 200);
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_EQ(e1->block, 0u);
  EXPECT_EQ(e2->block, 1u);
  EXPECT_NE(e1->id, e2->id);

  // LMC 2: LIDs 8..11 all reach the port.
  for (uint16_t lid : {uint16_t{8}, uint16_t{9}, uint16_t{10}, uint16_t{11}}) {
    auto d = dir->find(Lid(lid), Qpn(kFirstQpn));
    ASSERT_TRUE(d) << lid;
    EXPECT_EQ(d->port_slot, port);
    EXPECT_EQ(d->endpoint, e1->id);
  }
  EXPECT_FALSE(dir->find(Lid(12), Qpn(kFirstQpn)));
  EXPECT_FALSE(dir->find(Lid(0), Qpn(kFirstQpn)));
  EXPECT_EQ(dir->find(Lid(9), Qpn(kQpnBlock + 5))->endpoint, e2->id);
  EXPECT_EQ(dir->find(Lid(9), Qpn(2 * kQpnBlock))->endpoint, 0u) << "nobody owns block 2";
  EXPECT_EQ(dir->endpoint_pid(e2->id), 200u);

  // The SM moves the port to LID 20: the old LIDs lead nowhere.
  const uint64_t g = dir->generation();
  dir->write_port(port, active_port(20));
  EXPECT_GT(dir->generation(), g);
  EXPECT_FALSE(dir->find(Lid(9), Qpn(kFirstQpn)));
  EXPECT_EQ(dir->find(Lid(20), Qpn(kFirstQpn))->endpoint, e1->id);
  EXPECT_EQ(dir->read_port(port).lid, 20);

  // An endpoint leaves: its block is free and it is no longer alive.
  dir->remove_endpoint(e1->id);
  EXPECT_FALSE(dir->endpoint_alive(e1->id));
  EXPECT_TRUE(dir->endpoint_alive(e2->id));
  EXPECT_EQ(dir->find(Lid(20), Qpn(kFirstQpn))->endpoint, 0u);
  auto e3 = dir->add_endpoint(hca, 300);
  EXPECT_EQ(e3->block, 0u) << "the freed block is handed out again";
}

TEST(ShmDirectory, AProcessMapsWhatSoftibdWrites) {
  auto dir = ShmDirectory::create({8, 8, 8});
  ASSERT_TRUE(dir.ok());
  const uint32_t hca = *dir->hca_slot(1, 0xabc);
  const uint32_t port = *dir->port_slot(hca, 1);
  auto fd = dir->region().dup_fd();
  auto view = ShmDirectory::attach(*ShmRegion::map(*fd, 0));
  ASSERT_TRUE(view.ok()) << view.error().to_string();
  dir->write_port(port, active_port(3));
  EXPECT_EQ(view->read_port(port).lid, 3) << "the same pages";
  EXPECT_EQ(view->port_of_lid(Lid(3)), port);
}

TEST(ShmDirectory, TablesFillUp) {
  auto dir = ShmDirectory::create({2, 2, 3});
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(dir->hca_slot(1, 1).ok());
  EXPECT_TRUE(dir->hca_slot(2, 2).ok());
  EXPECT_EQ(dir->hca_slot(3, 3).error().code(), Code::kResourceExhausted);
  EXPECT_TRUE(dir->add_endpoint(0, 1).ok());
  EXPECT_TRUE(dir->add_endpoint(0, 2).ok());
  EXPECT_TRUE(dir->add_endpoint(1, 3).ok());
  EXPECT_EQ(dir->add_endpoint(1, 4).error().code(), Code::kResourceExhausted);
}

TEST(ShmDirectory, AMalformedDirectoryIsRefused) {
  auto dir = ShmDirectory::create({4, 4, 4});
  ASSERT_TRUE(dir.ok());
  auto& h = const_cast<DirHeader&>(dir->header());
  h.max_ports = 1000;  // the offsets no longer match the sizes
  EXPECT_FALSE(ShmDirectory::attach(*ShmRegion::map(*dir->region().dup_fd(), 0)).ok());
  h.max_ports = 4;
  h.magic = 1;
  EXPECT_FALSE(ShmDirectory::attach(*ShmRegion::map(*dir->region().dup_fd(), 0)).ok());
}

}  // namespace
}  // namespace softib::link

namespace softib::link {
namespace {

TEST(ShmDirectory, RoceGidsResolveToThePortsInternalLid) {
  auto dir = ShmDirectory::create();
  ASSERT_TRUE(dir.ok());
  PortSnapshot ib = active_port(7, 0);
  ib.port_guid = 0x0002c90300000007;
  ib.gid_prefix = Gid::kDefaultSubnetPrefix;
  dir->write_port(*dir->port_slot(*dir->hca_slot(1, 0x11), 1), ib);
  PortSnapshot eth = active_port(9, 0);
  eth.port_guid = 0x0002c90300000009;
  eth.gid_prefix = Gid::kDefaultSubnetPrefix;
  eth.link_layer = kLinkLayerEthernet;
  eth.ipv4 = 0x7F140002;
  eth.num_gids = 2;
  dir->write_port(*dir->port_slot(*dir->hca_slot(2, 0x22), 1), eth);

  EXPECT_EQ(port_gid(eth, 0), Gid(Gid::kDefaultSubnetPrefix, Guid(0x0002c90300000009)));
  EXPECT_EQ(port_gid(eth, 1)->to_string(), "::ffff:127.20.0.2");
  EXPECT_FALSE(port_gid(eth, 2).has_value());
  EXPECT_EQ(port_gid(ib, 1), std::nullopt) << "an InfiniBand port without GUIDCap has one GID";

  EXPECT_EQ(dir->lid_of_gid(Gid::from_ipv4(0x7F140002)), Lid(9));
  EXPECT_EQ(dir->lid_of_gid(*port_gid(eth, 0)), Lid(9));
  EXPECT_EQ(dir->lid_of_gid(*port_gid(ib, 0)), Lid(7));
  EXPECT_EQ(dir->lid_of_gid(Gid::from_ipv4(0x7F140003)), std::nullopt);
}

}  // namespace
}  // namespace softib::link
