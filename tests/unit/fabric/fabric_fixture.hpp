// A test agent on a fabric port, and helpers that speak MADs to the fabric's SMAs/PMAs.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "fabric/fabric.hpp"
#include "fabric/generators.hpp"
#include "mad/dr_route.hpp"
#include "mad/dr_smp.hpp"
#include "mad/smp.hpp"

namespace softib::fabric::testing {

struct Recorder : MadAgent {
  std::vector<Mad> got;
  void on_mad(PortRef, const Mad& m) override { got.push_back(m); }
};

class AgentOn {
 public:
  AgentOn(Fabric& f, PortRef port, std::vector<uint8_t> classes = {}) : f_(f) {
    auto id = f.attach(port, &rec_, std::move(classes));
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().to_string());
    id_ = id.ok() ? *id : 0;
  }
  ~AgentOn() { f_.detach(id_); }

  // Sends a DR SMP and returns the response (nullopt when none came back).
  std::optional<mad::DrSmp> dr(const mad::DrPath& path, mad::Method method, mad::SmpAttr attr,
                               uint32_t modifier = 0, const std::array<uint8_t, 64>* data = nullptr,
                               uint64_t m_key = 0) {
    mad::DrSmp smp = mad::make_dr_request(path, method, static_cast<uint16_t>(attr), modifier, ++tid_, m_key);
    if (data) smp.data = *data;
    Mad m;
    mad::encode(smp, wire::MutByteSpan(m.bytes));
    return exchange<mad::DrSmp>(m);
  }

  template <class A>
  std::optional<A> dr_get(const mad::DrPath& path, uint32_t modifier = 0) {
    auto r = dr(path, mad::Method::kGet, mad::Layout<A>::kAttributeId, modifier);
    if (!r || !r->status.ok()) return std::nullopt;
    auto a = mad::decode<A>(r->data);
    return a ? std::optional<A>(*a) : std::nullopt;
  }

  template <class A>
  std::optional<mad::DrSmp> dr_set(const mad::DrPath& path, const A& value, uint32_t modifier = 0, uint64_t m_key = 0) {
    std::array<uint8_t, 64> data{};
    mad::encode(value, wire::MutByteSpan(data));
    return dr(path, mad::Method::kSet, mad::Layout<A>::kAttributeId, modifier, &data, m_key);
  }

  // A LID-routed MAD (SMP or GMP) to `dlid`; returns the decoded response of type R.
  template <class R, class M>
  std::optional<R> lid(const M& request, Lid dlid, Qpn qp = Qpn(0)) {
    Mad m;
    mad::encode(request, wire::MutByteSpan(m.bytes));
    m.dlid = dlid;
    m.remote_qp = qp;
    return exchange<R>(m);
  }

  template <class R>
  std::optional<R> exchange(const Mad& m) {
    rec_.got.clear();
    f_.send(id_, m);
    f_.pump();
    if (rec_.got.empty()) return std::nullopt;
    auto r = mad::decode<R>(rec_.got.back().bytes);
    return r ? std::optional<R>(*r) : std::nullopt;
  }

  Recorder& recorder() { return rec_; }
  AgentId id() const { return id_; }
  uint64_t next_tid() { return ++tid_; }

 private:
  Fabric& f_;
  Recorder rec_;
  AgentId id_ = 0;
  uint64_t tid_ = 0x1000;
};

}  // namespace softib::fabric::testing
