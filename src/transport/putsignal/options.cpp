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
#if defined(MPICH_VERSION)
#define STF_PUTSIGNAL_NET_DEFAULT "p2p"
#else
#define STF_PUTSIGNAL_NET_DEFAULT "rma"
#endif
const OptionSpec putsignal_net_option = {
    "stf_putsignal_net", "STF_PUTSIGNAL_NET", "rma|p2p",
    "putsignal transport: how messages reach other nodes: rma (an MPI RMA window, a signal per message) or p2p "
    "(MPI point-to-point); default " STF_PUTSIGNAL_NET_DEFAULT " (p2p where built with MPICH, whose 4.0.2 stalled "
    "in MPI RMA between hosts)",
    STF_PUTSIGNAL_NET_DEFAULT, nullptr};
#undef STF_PUTSIGNAL_NET_DEFAULT

bool putsignal_rma_between_nodes(const Options &o) { return o.text(putsignal_net_option) == "rma"; }

const OptionSpec putsignal_timeout_option = {
    "stf_putsignal_timeout", "STF_PUTSIGNAL_TIMEOUT", "0..86400",
    "putsignal transport: seconds to wait for a peer before STF_ERR_TIMEOUT; 0 waits for ever (default 0)", "0",
    nullptr, 0, 86400};

}  // namespace stf
