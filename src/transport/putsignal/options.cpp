// The putsignal transport's options (declared in transport/registry.h, which
// lists them in the transport's row).
#include "transport/registry.h"

namespace stf {

const OptionSpec putsignal_slots_option = {
    "stf_putsignal_slots", "STF_PUTSIGNAL_SLOTS", "1|2|4|8|16|32|64",
    "putsignal transport: regions per peer and direction, i.e. operations in flight before a sender queues "
    "its message (default 4)",
    "4", nullptr, 1, 64};
const OptionSpec putsignal_unit_bytes_option = {
    "stf_putsignal_unit_bytes", "STF_PUTSIGNAL_UNIT_BYTES", "1..65536",
    "putsignal transport: bytes per unit a region holds; larger messages go by MPI point-to-point (default 16)",
    "16", nullptr, 1, 65536};
const OptionSpec putsignal_net_option = {
    "stf_putsignal_net", "STF_PUTSIGNAL_NET", "auto|rma|p2p",
    "putsignal transport: how messages reach other nodes: rma (an MPI RMA window, a signal per message), p2p "
    "(MPI point-to-point) or auto: rma where a put reaches a rank of another node without its help, p2p where "
    "the MPI emulates RMA over messages or is MPICH (default auto)",
    "auto", nullptr};

bool putsignal_rma_forced(const Options &o) { return o.text(putsignal_net_option) == "rma"; }

const OptionSpec putsignal_timeout_option = {
    "stf_putsignal_timeout", "STF_PUTSIGNAL_TIMEOUT", "0..86400",
    "putsignal transport: seconds to wait for a peer before STF_ERR_TIMEOUT; 0 waits for ever (default 0)", "0",
    nullptr, 0, 86400};

}  // namespace stf
