#include "sm/mad_port.hpp"

#include "mad/mgmt_class.hpp"

namespace softib::sm {

Result<std::unique_ptr<SimMadPort>> SimMadPort::attach(fabric::Fabric& fabric, fabric::PortRef port) {
  std::unique_ptr<SimMadPort> p(new SimMadPort(fabric, port));
  auto id = fabric.attach(port, p.get(),
                          {static_cast<uint8_t>(mad::MgmtClass::kSubnLid),
                           static_cast<uint8_t>(mad::MgmtClass::kSubnDirected),
                           static_cast<uint8_t>(mad::MgmtClass::kSubnAdm)});
  if (!id) return Err{id.error()};
  p->id_ = *id;
  SOFTIB_TRY(fabric.set_is_sm(port, true));
  return p;
}

SimMadPort::~SimMadPort() {
  (void)fabric_.set_is_sm(port_, false);
  fabric_.detach(id_);
}

Result<void> SimMadPort::send(const Mad& mad) {
  fabric_.send(id_, mad);
  return {};
}

std::optional<Mad> SimMadPort::receive() {
  if (inbox_.empty()) return std::nullopt;
  return inbox_.pop();
}

void SimMadPort::on_mad(fabric::PortRef, const Mad& mad) { inbox_.push(mad); }

}  // namespace softib::sm
