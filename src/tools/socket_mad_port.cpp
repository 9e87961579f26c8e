#include "tools/socket_mad_port.hpp"

#include "mad/method.hpp"
#include "mad/mgmt_class.hpp"

namespace softib::tools {

namespace {

ipc::RegisterMsg agent(mad::MgmtClass cls, uint8_t version, std::initializer_list<mad::Method> methods) {
  ipc::RegisterMsg r;
  r.mgmt_class = static_cast<uint8_t>(cls);
  r.class_version = version;
  for (mad::Method m : methods) {
    const auto b = static_cast<uint8_t>(m);
    r.method_mask[b / 8] = static_cast<uint8_t>(r.method_mask[b / 8] | (1u << (b % 8)));
  }
  return r;
}

}  // namespace

Result<std::unique_ptr<SocketMadPort>> SocketMadPort::open(ipc::Connection& c, uint32_t node, uint8_t port) {
  std::unique_ptr<SocketMadPort> p(new SocketMadPort(c));
  SOFTIB_TRY(c.open_port(node, port));
  using M = mad::Method;
  auto lid = c.register_agent(agent(mad::MgmtClass::kSubnLid, 1, {M::kGet, M::kSet, M::kTrap}));
  if (!lid) return Err{lid.error()};
  auto dr = c.register_agent(agent(mad::MgmtClass::kSubnDirected, 1, {M::kGet, M::kSet}));
  if (!dr) return Err{dr.error()};
  auto sa = c.register_agent(agent(mad::MgmtClass::kSubnAdm, 2,
                                   {M::kGet, M::kSet, M::kGetTable, M::kDelete, M::kGetMulti, M::kGetTraceTable}));
  if (!sa) return Err{sa.error()};
  p->smp_lid_ = *lid;
  p->smp_dr_ = *dr;
  p->sa_ = *sa;
  SOFTIB_TRY(c.set_is_sm(true));
  return p;
}

Result<void> SocketMadPort::send(const sm::Mad& mad) {
  ipc::MadMsg m;
  switch (static_cast<mad::MgmtClass>(mad.mgmt_class())) {
    case mad::MgmtClass::kSubnDirected: m.agent = smp_dr_; break;
    case mad::MgmtClass::kSubnAdm: m.agent = sa_; break;
    default: m.agent = smp_lid_; break;
  }
  m.lid = mad.dlid.value();
  m.remote_qp = mad.remote_qp.value();
  m.qkey = mad.qkey.value();
  m.sl = mad.sl;
  m.pkey = mad.pkey.value();
  m.mad.assign(mad.bytes.begin(), mad.bytes.end());
  return c_.send_mad(m);
}

std::optional<sm::Mad> SocketMadPort::receive() {
  auto m = c_.recv_mad(Duration::zero());
  if (!m || !*m || (*m)->mad.size() != fabric::kMadSize) return std::nullopt;
  sm::Mad out;
  std::copy((*m)->mad.begin(), (*m)->mad.end(), out.bytes.begin());
  out.slid = Lid((*m)->lid);
  out.remote_qp = Qpn((*m)->remote_qp & 0xFFFFFF);
  out.qkey = QKey((*m)->qkey);
  out.sl = (*m)->sl;
  out.pkey = PKey((*m)->pkey);
  return out;
}

}  // namespace softib::tools
